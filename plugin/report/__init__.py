"""report.html: one self-contained page per run directory, built only from the run's output files
(so a merged or copied run directory rebuilds the same page: `reasoning-evals report RUN_DIR`).

runs.py reads a run directory into what the page shows, charts.py draws it (matplotlib, SVG
inline), page.html.j2 lays it out (Jinja2) with its CSS and script inline: nothing is fetched
when the page opens. Jinja2 and matplotlib are the `report` extra; without them a run says so in
one line and writes everything else as before.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from pytest_reasoning_evals.errors import ReportError

REPORT_FILE = "report.html"
# From this many records on, a run writes its page in a process of its own (write_run_report).
APART_FROM = 2000
# Seconds the run's end waits for a page's own process (a stopped or hung one would hold it for
# good), then kills it; and for a writer never used to end once told to.
WRITE_TIMEOUT = 300.0
CLOSE_TIMEOUT = 10.0
EXTRA_MODULES = {"jinja2", "markupsafe", "matplotlib"}  # the `report` extra
MISSING_EXTRA = "report.html not written: it needs Jinja2 and matplotlib (pip install 'pytest-reasoning-evals[report]')"


@dataclass(frozen=True)
class Written:
    path: Path | None  # the page, or None when it was not written
    note: str  # the summary block's line about it
    warning: str | None = None  # a page written without some of its item rows: why (one line)


def write_report(run_dir: Path, baseline: Path | None = None, out: Path | None = None) -> Written:
    """Write the page (default RUN_DIR/report.html). A missing extra or an unusable run directory
    is the returned note, never an exception: the run's results are already written."""
    from pytest_reasoning_evals.results import replacing

    target = out or run_dir / REPORT_FILE
    try:
        from pytest_reasoning_evals.report import page, runs  # noqa: F401 - without the extra: the note below

        with contextlib.ExitStack() as cleanup:  # the view's spooled rows are closed however the page ends
            # before the temp file: a bad directory leaves nothing behind
            view = runs.read_run(run_dir, baseline, cleanup)
            with replacing(target) as handle:
                page.write(view, handle)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in EXTRA_MODULES:
            raise
        return Written(None, MISSING_EXTRA)
    except (ReportError, OSError) as exc:
        return Written(None, f"report.html not written: {exc}")
    missing = view.get("items_note")
    return Written(target, f"report: {target}", f"WARNING {missing}" if missing else None)


class PageWriter:
    """A process of its own that imports what a page needs while the run runs, then writes the
    page of the run directory it is sent (report/__main__.py), as `reasoning-evals report RUN_DIR`
    does: a large run's end then waits for the page, not for Python and matplotlib to start.
    Started by the speed plugin; one page each."""

    def __init__(self, process: subprocess.Popen):
        self.process = process
        # a relative run directory is read from the folder the process started in
        self.cwd = os.getcwd()

    @classmethod
    def start(cls) -> PageWriter | None:
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "pytest_reasoning_evals.report"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        except OSError:
            return None
        return cls(process)

    def write(self, run_dir: Path) -> subprocess.CompletedProcess | None:
        """The finished command, or None when this process cannot write the page (it ended, or
        the path is not one line): the caller starts the command afresh. TimeoutExpired when it
        did not end within WRITE_TIMEOUT: it was killed."""
        if self.process.poll() is not None or "\n" in str(run_dir) or os.getcwd() != self.cwd:
            self.close()
            return None
        stdout, stderr = self._communicate(f"{run_dir}\n", WRITE_TIMEOUT)  # TimeoutExpired: it was killed
        return subprocess.CompletedProcess(self.process.args, self.process.returncode, stdout, stderr)

    def close(self) -> None:
        """Not used: with nothing sent, it ends (or is killed after CLOSE_TIMEOUT)."""
        if self.process.returncode is None:
            with contextlib.suppress(OSError, ValueError, subprocess.TimeoutExpired):
                self._communicate("", CLOSE_TIMEOUT)

    def _communicate(self, text: str, timeout: float) -> tuple[str, str]:
        """Send `text`, wait at most `timeout` seconds for the process to end, else kill it (a
        stopped process dies of SIGKILL too) and raise TimeoutExpired."""
        try:
            return self.process.communicate(text, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()  # reaped, its pipes closed
            raise


def write_run_report(run_dir: Path, records: int, writer: PageWriter | None = None) -> Written:
    """A run's page, written at the end of its session. A run of APART_FROM records or more has
    it written by `reasoning-evals report RUN_DIR` in a process of its own (`writer`'s, when one
    was started ahead): matplotlib and the page's objects then stay out of the run's process,
    whose peak memory is what its items need. A smaller run writes it here: a process's start
    (Python, then matplotlib's import) would cost more than the memory it saves."""
    if records < APART_FROM:
        if writer is not None:
            writer.close()
        return write_report(run_dir)
    try:
        done = writer.write(run_dir) if writer is not None else None
        if done is None:  # subprocess.run kills the command at its timeout
            done = subprocess.run(
                [sys.executable, "-m", "pytest_reasoning_evals", "report", str(run_dir)],
                capture_output=True,
                text=True,
                timeout=WRITE_TIMEOUT,
            )
    except subprocess.TimeoutExpired:
        return Written(
            None,
            f"report.html not written: its process gave no answer within {WRITE_TIMEOUT:g} s and was killed; "
            f"write it with `reasoning-evals report {run_dir}`",
        )
    if done.returncode == 0:
        return Written(run_dir / REPORT_FILE, f"report: {run_dir / REPORT_FILE}")
    said = done.stderr.strip().splitlines()
    if done.returncode == 2 and said:  # the command's own one-line note (a missing extra, a bad directory)
        return Written(None, said[-1])
    return Written(
        None,
        f"report.html not written: `reasoning-evals report {run_dir}` failed (exit {done.returncode})"
        + (f": {said[-1]}" if said else ""),
    )
