"""A large run's report.html is written by a process started while its items run (report.PageWriter,
started by the speed plugin): the run's end waits for the page, not for Python and matplotlib to
start. The page is the one `reasoning-evals report` writes; a writer not used ends."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import add_eval_module, run_dir

from pytest_reasoning_evals import report
from pytest_reasoning_evals.options import DEFAULT_MODEL
from pytest_reasoning_evals.report import REPORT_FILE, PageWriter, Written, write_report, write_run_report

# every run of more than 3 items is a large one; each writer's start and the session's end are logged in order
WRITER_PROBE = """
import json
import pytest
import pytest_reasoning_evals.report as report

report.APART_FROM = 3
started = report.PageWriter.start


def logged(cls):
    writer = started()
    with open("events.jsonl", "a") as out:
        out.write(json.dumps(["started", writer.process.pid]) + "\\n")
    return writer


report.PageWriter.start = classmethod(logged)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    with open("events.jsonl", "a") as out:
        out.write(json.dumps(["sessionfinish", None]) + "\\n")
"""


def events(pytester: pytest.Pytester) -> list[list]:
    path = pytester.path / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def gone(pid: int) -> bool:
    return not os.path.exists(f"/proc/{pid}") or "(python" not in Path(f"/proc/{pid}/stat").read_text()


def test_a_large_run_starts_its_page_writer_while_its_items_run(pytester: pytest.Pytester, tmp_path: Path) -> None:
    add_eval_module(pytester)
    pytester.makeconftest(WRITER_PROBE)
    result = pytester.runpytest_subprocess("--eval-max-items", "8", "-p", "no:randomly")
    assert result.ret == 0, result.stdout.str()
    assert [kind for kind, _ in events(pytester)] == ["started", "sessionfinish"]
    run = run_dir(pytester, DEFAULT_MODEL, subset=True)
    result.stdout.fnmatch_lines([f"report: {run / REPORT_FILE}"])
    again = write_report(run, out=tmp_path / "again.html")
    assert again.path.read_bytes() == (run / REPORT_FILE).read_bytes()


def test_a_writer_started_for_a_page_written_in_process_ends(pytester: pytest.Pytester) -> None:
    """Started (8 items collected), but -x stops the run after its first wrong answer: fewer
    records than APART_FROM, so the page is written in the run's process and the writer ends."""
    add_eval_module(pytester)
    pytester.makeconftest(WRITER_PROBE)
    result = pytester.runpytest_subprocess("--eval-max-items", "8", "-x", "-p", "no:randomly")
    run = run_dir(pytester, DEFAULT_MODEL, subset=True)
    records = (run / "completions.jsonl").read_text().splitlines()
    assert len(records) < 3, result.stdout.str()
    (kind, pid), *_ = events(pytester)
    assert kind == "started" and gone(pid)
    assert (run / REPORT_FILE).exists()


def test_a_writer_writes_the_page_or_the_commands_note(tmp_path: Path, monkeypatch) -> None:
    missing = tmp_path / "nowhere"
    assert write_run_report(missing, report.APART_FROM, PageWriter.start()) == Written(
        None, f"report.html not written: {missing}: no such run directory"
    )
    writer = PageWriter.start()
    writer.close()
    assert writer.process.returncode == 0
    monkeypatch.chdir(tmp_path)
    # a writer that ended is not used: the command runs afresh
    assert write_run_report(missing, report.APART_FROM, writer) == Written(
        None, f"report.html not written: {missing}: no such run directory"
    )


STOPPED_WRITER = """
import os
import signal

import pytest_reasoning_evals.report as report

report.APART_FROM = 3
report.WRITE_TIMEOUT = 3
started = report.PageWriter.start


def stopped(cls):
    writer = started()
    os.kill(writer.process.pid, signal.SIGSTOP)  # a writer that never answers
    with open("writer.pid", "w") as out:
        out.write(str(writer.process.pid))
    return writer


report.PageWriter.start = classmethod(stopped)
"""


def test_a_stopped_page_writer_is_killed_and_the_run_ends_with_one_line(pytester: pytest.Pytester) -> None:
    """A writer stopped with SIGSTOP (or hung) is waited for WRITE_TIMEOUT, then killed: the run ends
    with one line saying report.html was not written and how to write it (issue 38, Low 10)."""
    add_eval_module(pytester)
    pytester.makeconftest(STOPPED_WRITER)
    result = pytester.runpytest_subprocess("--eval-max-items", "8", "-p", "no:randomly", timeout=120)
    assert result.ret == 0, result.stdout.str()
    run = run_dir(pytester, DEFAULT_MODEL, subset=True)
    result.stdout.fnmatch_lines(
        [
            f"report.html not written: its process gave no answer within 3 s and was killed; write it with `reasoning-evals report {run}`"
        ]
    )
    assert not (run / REPORT_FILE).exists()
    assert gone(int((pytester.path / "writer.pid").read_text()))


def test_a_stopped_writer_that_is_not_used_is_killed_at_close(monkeypatch) -> None:
    import signal
    import time

    monkeypatch.setattr(report, "CLOSE_TIMEOUT", 1)
    writer = PageWriter.start()
    os.kill(writer.process.pid, signal.SIGSTOP)
    began = time.monotonic()
    writer.close()
    assert time.monotonic() - began < 10 and gone(writer.process.pid)
