"""report/__init__.py: a page the other process could not write is the run's one-line note."""

from __future__ import annotations

from pathlib import Path

from pytest_reasoning_evals.report import (
    APART_FROM,
    Written,
    write_run_report,
)


def test_a_page_the_other_process_could_not_write_is_the_runs_one_line_note(tmp_path: Path) -> None:
    written = write_run_report(tmp_path / "nowhere", APART_FROM)
    assert written == Written(None, f"report.html not written: {tmp_path / 'nowhere'}: no such run directory")
