"""One protocol's run directory, for every protocol (the shipped ones and a team's own): held by
one run at a time, what a previous run left read or checked before this run writes anything, the
files every run ends with (gates.json, report.html), and why a run is incomplete
(docs/design.md, "Runs and their directories")."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from pytest_reasoning_evals.gates import BaselineError, GateResult, write_gates
from pytest_reasoning_evals.protocol import stop_reason
from pytest_reasoning_evals.report import Written, write_run_report
from pytest_reasoning_evals.results import RunDirLock, lock_problem

if TYPE_CHECKING:
    from pytest_reasoning_evals.session import EvalSession

T = TypeVar("T")


class RunDirectory:
    """The run directory `path` of protocol `name` in this session (every process builds its own)."""

    def __init__(self, session: EvalSession, name: str, path: Path):
        self.session = session
        self.name = name  # the protocol's: whose report page writer (report.PageWriter) it uses
        self.path = path

    @functools.cached_property
    def lock(self) -> RunDirLock:
        """One run at a time per run directory (results.py); made on first use, since it notes the
        output folders missing then (a run that writes nothing removes them)."""
        return RunDirLock.for_session(self.session.config, self.path)

    def hold(self, config_problem: Callable[[], str | None] | None = None) -> None:
        """The lock, or a usage error naming the run that holds it or why the directory cannot be
        made; then `config_problem`: why the answers a previous run left here cannot be replaced by
        this run's (another model under the alias, say), a usage error too."""
        from pytest_reasoning_evals.errors import UsageProblem

        if self.session.settings.estimate:
            return  # an estimate writes nothing and may run beside the run it prices
        problem = lock_problem(self.lock) or (config_problem() if config_problem else None)
        if problem:
            raise UsageProblem(problem)

    def try_hold(self) -> bool:
        """Controller: under xdist it shares its workers' lock from the first result on."""
        return self.lock.try_hold()

    def previous(self, path: Path | None, load: Callable[[Path], T]) -> T | None:
        """A previous run's files (a regression baseline, `load`ed from `path`) read at the start,
        before this run writes anything, since it may be this very directory; its BaselineError is
        a usage error. None without a path."""
        if path is None:
            return None
        try:
            return load(path)
        except BaselineError as exc:
            raise pytest.UsageError(str(exc)) from None

    def close(self, gates: list[GateResult], records: int) -> Written:
        """The files every run ends with, after its own: gates.json, then report.html (of `records` items)."""
        write_gates(self.path, gates)
        speed = self.session.speed  # its writer of this page, started ahead (report.PageWriter)
        return write_run_report(self.path, records, speed.page_writer(self.name) if speed is not None else None)

    @staticmethod
    def incomplete_reason(session: pytest.Session, *notes: str | None) -> str | None:
        """Why the run is incomplete: the session's stop, then the protocol's `notes` (items that
        raised, items not asked), or None."""
        return "; ".join(filter(None, (stop_reason(session), *notes))) or None
