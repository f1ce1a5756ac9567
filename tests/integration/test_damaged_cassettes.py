"""Whole runs over damaged cassettes: a malformed 200 is asked again by the next recording run; a
truncated cassette replays as a one-line miss."""

from __future__ import annotations

import json

import pytest
from fakeprovider import malformed
from helpers import add_eval_module, read_summary, run_dir
from unit.test_cassettes_hardening import (
    _cut_in_half,
    assert_unreadable_miss,
    interactions,
)

from integration.test_recording import fake_run  # the same six-question recording run

# every test here runs whole sessions, each over a second
pytestmark = [pytest.mark.slow]

KEY_VAR = "FAKE_PROVIDER_KEY"
CLOSED_PORT_URL = "http://127.0.0.1:9/v1"  # nothing listens here: replays must not need it
SUITE = "bank-zeroshot"


def test_whole_run_a_malformed_200_is_asked_again_by_the_next_recording_run(pytester, server) -> None:
    add_eval_module(pytester)
    server.responder = lambda body: (
        "TRUE" if any(f"q-{i} " in body["messages"][-1]["content"] for i in (1, 3, 5)) else "FALSE"
    )
    server.script(malformed())
    first = fake_run(pytester, server.openai_base, "--eval-record-mode", "once")
    assert first.ret == pytest.ExitCode.TESTS_FAILED, first.stdout.str()  # 1 of 6 failed calls > 5%
    assert len(server.requests) == 6
    folder = pytester.path / "cassettes" / "fake" / SUITE
    assert len(list(folder.glob("*.yaml"))) == 5, "the malformed answer has no cassette"
    failed = [
        r
        for r in map(json.loads, (run_dir(pytester, "fake") / "completions.jsonl").read_text().splitlines())
        if r["error"]
    ]
    assert len(failed) == 1 and failed[0]["error"].startswith("malformed provider response")

    resumed = fake_run(pytester, server.openai_base, "--eval-resume", "--eval-record-mode", "once")
    assert resumed.ret == 0, resumed.stdout.str()
    assert len(server.requests) == 7, "the resumed run asked the failed item live, once"
    assert len(list(folder.glob("*.yaml"))) == 6
    assert read_summary(pytester, "fake")["num_errors"] == 0

    server.close()
    replayed = fake_run(pytester, CLOSED_PORT_URL)  # default: the model has cassettes -> replay
    assert replayed.ret == 0, replayed.stdout.str()
    assert read_summary(pytester, "fake")["overall_accuracy"] == 1.0


def test_whole_run_replay_of_a_truncated_cassette(pytester, server) -> None:
    add_eval_module(pytester)
    recorded = fake_run(pytester, server.openai_base, "-n", "2", "--eval-record-mode", "once")
    assert recorded.ret == 0, recorded.stdout.str()
    broken = pytester.path / "cassettes" / "fake" / SUITE / "q-3.yaml"
    _cut_in_half(broken)
    replayed = fake_run(pytester, server.openai_base, "-n", "2", "-rA")
    out = replayed.stdout.str()
    assert replayed.ret == pytest.ExitCode.TESTS_FAILED, out  # as for a miss: the failed-calls gate
    assert "Traceback" not in out and "KeyError" not in out and "INTERNALERROR" not in out
    replayed.stdout.fnmatch_lines(
        [
            "gate failed-calls: FAILED (1 items (16.7%) ended in failed calls (0 provider errors, 1 cassette misses)*",
            f"CASSETTE MISSES: 1 items *; record them with: {KEY_VAR}=... pytest * -n 2 -rA --eval-record-mode=refresh",
        ]
    )
    # the item's one line names the file to repair (issue 38: it was cut after the item's id)
    replayed.stdout.fnmatch_lines([f"*test_question?q-3? - UNKNOWN *: unreadable cassette (*): {broken}; *"])
    summary = read_summary(pytester, "fake")
    assert summary["errors_by_kind"] == {"cassette_miss": 1, "provider": 0, "harness": 0}
    records = {
        r["id"]: r for r in map(json.loads, (run_dir(pytester, "fake") / "completions.jsonl").read_text().splitlines())
    }
    assert [i for i, r in records.items() if r["error"]] == ["q-3"], "the session went on: the other items replayed"
    assert_unreadable_miss(records["q-3"]["error"], broken, "", "q-3")  # cut in half: no response, or bad YAML
    assert len(server.requests) == 6, "the replay sent nothing"

    rerecorded = fake_run(pytester, server.openai_base, "-n", "2", "-rA", "--eval-record-mode=once")
    assert rerecorded.ret == 0, rerecorded.stdout.str()
    assert len(server.requests) == 7, "only the unreadable cassette was recorded again"
    assert len(interactions(broken)) == 1
