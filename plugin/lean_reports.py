"""What pytest keeps of an eval item's reports to the end of the run, made lean once every hook has
seen them whole (docs/design.md, "Speed machinery")."""

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
