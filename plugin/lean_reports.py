"""What pytest keeps of an eval item's reports to the end of the run, made lean.

pytest's terminal reporter keeps every report until the session ends: the setup and teardown
ones too, though it reads those only for what they captured. At 40,000 items they were the
largest part of an eval run's xdist controller memory, and the kept call reports' strings (each
report arrives from its worker as new copies of "passed", "chaosbench", the worker's run id, the
module's path...) a further part (benchmarks/replay_throughput.py shows the controller's peak).

`make_lean` runs once every hook has seen the report whole (session.py), so no plugin sees less:
a passed setup or teardown that captured nothing is dropped, and a call report's repeated strings
are shared (interned) when it came from a worker (in one process they are shared already). Only
eval items' reports: others are left as pytest made them.
"""

from __future__ import annotations

from sys import intern

import pytest


def make_lean(report: pytest.TestReport, kept_by_terminal: dict[str, list], from_worker: bool) -> None:
    """`kept_by_terminal`: the terminal reporter's stats (category -> reports)."""
    if report.when != "call":
        silent = kept_by_terminal.get("", [])  # pytest's category of a passed setup or teardown
        if report.passed and not report.sections and silent and silent[-1] is report:
            silent.pop()  # just added by the terminal reporter, and never read again
        return
    if not from_worker:
        return
    fields = report.__dict__
    for name, value in fields.items():
        if type(value) is str:
            fields[name] = intern(value)
    path, line, domain = report.location
    report.location = (intern(path), line, domain)
    report.keywords = {intern(word): value for word, value in report.keywords.items()}
