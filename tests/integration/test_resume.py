"""Resume: only what is missing is asked, answers of another configuration are refused, checkpoints
are written, and a run killed with SIGKILL mid-dialogue pays for no call twice when resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from fakeprovider import FakeProvider
from helpers import (
    add_eval_module,
    answer_by_text,
    bodies,
    eval_args,
    fake_run_args,
    run_dir,
    small_bank,
)


def completions(directory) -> list[dict]:
    return [json.loads(line) for line in (directory / "completions.jsonl").read_text().splitlines()]


# --- a recording run killed with SIGKILL, then resumed ---


# --- resume ---


@pytest.mark.slow
def test_resume_asks_only_what_is_missing_and_ends_with_the_full_summary(pytester) -> None:
    add_eval_module(pytester)
    assert pytester.runpytest("--model", "random").ret == 0
    directory = run_dir(pytester, "random")
    full_summary = (directory / "summary.json").read_text()
    lines = (directory / "completions.jsonl").read_text().splitlines()
    kept = lines[::2]
    # as a crash leaves it: every other record, and a last line cut short mid-write
    (directory / "completions.jsonl").write_text("\n".join(kept) + "\n" + lines[1][:40])
    result = pytester.runpytest("--model", "random", "--eval-resume", "-n", "2")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [f"*{len(lines) - len(kept)} items*", f"*{len(kept)} items resumed from an earlier run*"]
    )
    asked = result.parseoutcomes()
    assert asked.get("passed", 0) + asked.get("wrong", 0) + asked.get("failed", 0) == len(lines) - len(kept)
    assert (directory / "summary.json").read_text() == full_summary
    assert len(completions(directory)) == len(lines)

    again = pytester.runpytest("--model", "random", "--eval-resume")  # nothing left to ask
    assert again.ret == 0, again.stdout.str()
    assert (directory / "summary.json").read_text() == full_summary


def test_resume_refuses_answers_made_under_another_configuration(pytester) -> None:
    add_eval_module(pytester)
    pytester.runpytest("--model", "random", "--eval-seed", "1", "--eval-max-items", "5")
    result = pytester.runpytest("--model", "random", "--eval-seed", "2", "--eval-max-items", "5", "--eval-resume")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--eval-resume: the answers in * were made with another configuration (differs in: seed)*"]
    )


@pytest.mark.slow
def test_resume_takes_answers_made_before_a_price_changed_or_the_server_moved(pytester, fake_key) -> None:
    # neither decides an answer: a team that corrects a price, or whose local server comes back
    # on another port, resumes its run (it was refused: "differs in: config_hash, model")
    add_eval_module(pytester)
    cases = str(small_bank(pytester.path / "bank.jsonl"))
    with FakeProvider() as server:
        server.responder = answer_by_text
        assert pytester.runpytest(*fake_run_args(pytester, server.openai_base, cases, price_in=1.0)).ret == 0
    directory = run_dir(pytester, "fake")
    full_summary = json.loads((directory / "summary.json").read_text())
    lines = (directory / "completions.jsonl").read_text().splitlines()
    (directory / "completions.jsonl").write_text("\n".join(lines[::2]) + "\n")  # a crash left half
    with FakeProvider() as moved:
        moved.responder = answer_by_text
        result = pytester.runpytest(*fake_run_args(pytester, moved.openai_base, cases, price_in=2.0), "--eval-resume")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines([f"*{len(lines[::2])} items resumed from an earlier run*"])
    resumed = json.loads((directory / "summary.json").read_text())
    decided = ("overall_accuracy", "total_evaluated", "num_correct", "task_accuracy", "dialogue_accuracy")
    assert {k: resumed[k] for k in decided} == {k: full_summary[k] for k in decided}


def test_checkpoint_progress_is_written(pytester) -> None:
    add_eval_module(pytester)
    pytester.runpytest("--model", "oracle", "--eval-max-items", "120")
    progress = json.loads((run_dir(pytester, "oracle", subset=True) / "checkpoints" / "progress.json").read_text())
    assert (progress["answered"], progress["not_asked"]) == (120, 0)
    config = json.loads((run_dir(pytester, "oracle", subset=True) / "checkpoints" / "config.json").read_text())
    assert config["max_items"] == 120 and config["model"]["alias"] == "oracle"


@pytest.mark.slow
def test_sigkill_mid_dialogue_then_resume_pays_no_call_twice(pytester, fake_key) -> None:
    add_eval_module(pytester)
    with FakeProvider() as reference:  # the uninterrupted run
        reference.responder = answer_by_text
        result = pytester.runpytest_subprocess(*eval_args(pytester, reference.openai_base, "whole")[1:])
        assert result.ret == 0, result.stdout.str()
        expected_bodies = bodies(reference)
    (whole,) = (pytester.path / "results-whole").glob("fake_zeroshot_bank-*")
    expected = json.loads((whole / "summary.json").read_text())
    assert len(expected_bodies) == 12 + 2 * 3

    with FakeProvider() as server:
        server.responder = answer_by_text
        server.hold_after = 14  # the 12 questions and two turns of the first dialogue; turn 3 hangs
        args = eval_args(pytester, server.openai_base, "killed")
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest", *args],
            cwd=pytester.path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while server.held == 0 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert server.held == 1, "the run never reached the held request"
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        directory = pytester.path / "results-killed" / whole.name
        assert len(completions(directory)) == 12, "every answered question was kept"
        dialogue_cassette = pytester.path / "cassettes-killed" / "fake" / "bank-zeroshot" / "d0.yaml"
        assert dialogue_cassette.read_text().count("request:") == 2, "the paid turns were saved before the kill"

        server.hold_after = None
        result = pytester.runpytest_subprocess(*args[1:], "--eval-resume")
        assert result.ret == 0, result.stdout.str()
        assert bodies(server) == expected_bodies, "each request answered exactly once over both runs"
    assert json.loads((directory / "summary.json").read_text()) == expected
    assert len(completions(directory)) == 14
