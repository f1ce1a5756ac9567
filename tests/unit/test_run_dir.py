"""RunDirectory, the run-directory helper of every protocol: the hold and its refusals, a previous
run read before this one writes, and why a run is incomplete."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest

from pytest_reasoning_evals import results
from pytest_reasoning_evals.errors import UsageProblem
from pytest_reasoning_evals.gates import BaselineError
from pytest_reasoning_evals.run_dir import RunDirectory


def a_session(estimate: bool = False) -> SimpleNamespace:
    """What RunDirectory reads of the session: its config (the lock's command line and cleanup), --eval-estimate."""
    cleanups: list = []
    config = SimpleNamespace(
        invocation_params=SimpleNamespace(args=("evals", "--model", "fake")), option=SimpleNamespace()
    )
    config.add_cleanup, config.cleanups = cleanups.append, cleanups
    return SimpleNamespace(config=config, settings=SimpleNamespace(estimate=estimate))


def test_hold_locks_the_directory_in_this_runs_name_until_the_session_ends(tmp_path) -> None:
    session = a_session()
    directory = RunDirectory(session, "shortanswer", tmp_path / "out" / "fake_shortanswer")
    directory.hold()
    holder = json.loads((directory.path / ".lock").read_text())
    assert (holder["pid"], holder["command"]) == (os.getpid(), "pytest evals --model fake")
    assert not results.RunDirLock(directory.path, 4242, "pytest other").try_hold(), "another run is kept out"
    assert directory.try_hold(), "this run holds it still"
    for cleanup in session.config.cleanups:
        cleanup()
    assert not (tmp_path / "out").exists(), "a run that wrote nothing leaves no folder behind"


def test_a_directory_another_run_holds_is_refused_in_one_line_naming_that_run(tmp_path) -> None:
    path = tmp_path / "fake_shortanswer"
    other = results.RunDirLock(path, 4242, "pytest evals --model other")
    assert other.try_hold()
    try:
        with pytest.raises(UsageProblem) as refused:
            RunDirectory(a_session(), "shortanswer", path).hold()
    finally:
        other.release()
    message = str(refused.value)
    assert message.startswith(f"{path} is in use by another run (pid 4242 on ")
    assert message.endswith(
        ": pytest evals --model other); wait for it to end, or give this run another --eval-out-dir"
    )
    assert "\n" not in message


def test_a_directory_that_cannot_be_made_is_a_usage_error_naming_it(tmp_path) -> None:
    (tmp_path / "out").write_text("a file where the output folder should be")
    path = tmp_path / "out" / "fake_shortanswer"
    with pytest.raises(UsageProblem, match=r"^--eval-out-dir \(ini eval_out_dir\): cannot use .*fake_shortanswer"):
        RunDirectory(a_session(), "shortanswer", path).hold()


def test_what_a_previous_run_left_is_checked_once_the_directory_is_held(tmp_path) -> None:
    directory = RunDirectory(a_session(), "chaosbench", tmp_path / "run")
    seen = []

    def problem() -> str:
        seen.append(directory.lock.held)
        return "its answers are of another model under this alias"

    with pytest.raises(UsageProblem, match="^its answers are of another model under this alias$"):
        directory.hold(problem)
    assert seen == [True]
    directory.hold(lambda: None)  # no problem: held, and nothing raised


def test_an_estimate_neither_holds_nor_makes_the_directory(tmp_path) -> None:
    RunDirectory(a_session(estimate=True), "chaosbench", tmp_path / "run").hold(lambda: "never asked")
    assert not (tmp_path / "run").exists()


def test_a_previous_run_is_read_before_this_run_writes_and_a_bad_one_is_a_usage_error(tmp_path) -> None:
    directory = RunDirectory(a_session(), "dialectic", tmp_path / "run")
    assert directory.previous(None, lambda path: pytest.fail("nothing to read")) is None
    assert directory.previous(tmp_path / "old", lambda path: {"read": path.name}) == {"read": "old"}

    def broken(path):
        raise BaselineError(f"{path}: not a run directory")

    with pytest.raises(pytest.UsageError, match="old: not a run directory$"):
        directory.previous(tmp_path / "old", broken)


def test_the_incomplete_reason_is_the_sessions_stop_then_the_protocols_notes() -> None:
    pluginmanager = SimpleNamespace(get_plugin=lambda name: None)
    session = SimpleNamespace(
        config=SimpleNamespace(pluginmanager=pluginmanager),
        shouldstop=False,
        shouldfail=False,
        exitstatus=pytest.ExitCode.OK,
    )
    assert RunDirectory.incomplete_reason(session, None, None) is None
    notes = ("2 items ended in a harness error (see their tracebacks)", None, "1 item not asked")
    assert RunDirectory.incomplete_reason(session, *notes) == f"{notes[0]}; {notes[2]}"
    session.shouldstop = "provider outage: 3 calls in a row failed"
    assert RunDirectory.incomplete_reason(session, notes[0]) == f"provider outage: 3 calls in a row failed; {notes[0]}"
