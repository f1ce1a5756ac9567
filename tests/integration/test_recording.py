"""Recording and replay in whole sessions: record under xdist then replay offline; a replay miss
fails the item and the session; a refused key stops the session once."""

from __future__ import annotations

import json

import pytest
from fakeprovider import status
from helpers import (
    FAKE_KEY_VAR,
    add_eval_module,
    fake_model_args,
    fake_models,
    question,
    read_summary,
    the_run,
    write_jsonl,
)

# every test here runs whole sessions, each over a second
pytestmark = [pytest.mark.slow]

PLANTED_KEY = "fake-" + "k3y" * 8  # built at run time; must never reach a cassette
CLOSED_PORT_URL = "http://127.0.0.1:9/v1"  # nothing listens here: replays must not need it


@pytest.fixture
def server(server, monkeypatch):
    monkeypatch.setenv(FAKE_KEY_VAR, PLANTED_KEY)
    return server


# --- through pytest: record a suite, replay it with the server gone, stop on a refused key ---


def fake_run(pytester, server_url: str, *args: str):
    bank = write_jsonl(
        pytester.path / "bank.jsonl", [question(f"q-{i}", "TRUE" if i % 2 else "FALSE") for i in range(6)]
    )
    return pytester.runpytest_subprocess(*fake_model_args(pytester, fake_models(server_url), bank), *args)


def test_record_under_xdist_then_replay_offline(pytester, server) -> None:
    add_eval_module(pytester)
    recorded = fake_run(pytester, server.openai_base, "-n", "2", "--eval-record-mode", "once")
    assert recorded.ret == 0, recorded.stdout.str()
    assert len(server.requests) == 6
    first = read_summary(pytester, "fake")
    assert len(list((pytester.path / "cassettes" / "fake" / "bank-zeroshot").glob("*.yaml"))) == 6
    server.close()
    replayed = fake_run(pytester, CLOSED_PORT_URL, "-n", "2")  # default mode: cassettes exist -> none
    assert replayed.ret == 0, replayed.stdout.str()
    assert read_summary(pytester, "fake") == first
    assert first["overall_accuracy"] == 0.5 and first["tokens"]["input"] > 0


def test_own_questions_recorded_under_the_old_folder_name_replay_with_one_note_and_move_with_git_mv(
    pytester, server
) -> None:
    """Recordings of a team's questions made when every cassette folder was chaosbench-<mode>."""
    add_eval_module(pytester)
    assert fake_run(pytester, server.openai_base, "--eval-record-mode", "once").ret == 0
    model_dir = pytester.path / "cassettes" / "fake"
    (model_dir / "bank-zeroshot").rename(model_dir / "chaosbench-zeroshot")
    server.close()
    old = fake_run(pytester, CLOSED_PORT_URL)
    assert old.ret == 0, old.stdout.str()
    old.stdout.fnmatch_lines(
        [
            "cassettes of bank read from cassettes/fake/chaosbench-zeroshot (the folder's name in earlier versions); "
            "`git mv cassettes/fake/chaosbench-zeroshot cassettes/fake/bank-zeroshot` names them after your file *",
        ]
    )
    assert "calls 6: 6 cassette hits, 0 live" in old.stdout.str()
    (model_dir / "chaosbench-zeroshot").rename(model_dir / "bank-zeroshot")  # what the note says to do
    moved = fake_run(pytester, CLOSED_PORT_URL)
    assert moved.ret == 0 and "calls 6: 6 cassette hits" in moved.stdout.str()
    assert "their folder's name before" not in moved.stdout.str()


def test_replay_miss_fails_the_item_and_the_session(pytester, server) -> None:
    add_eval_module(pytester)
    result = fake_run(pytester, server.openai_base, "--eval-record-mode", "none", "--eval-max-items", "2", "-rA")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "gate failed-calls: FAILED (2 items (100.0%) ended in failed calls (0 provider errors, 2 cassette misses)*",
            "CASSETTE MISSES: 2 items have no matching cassette *; record them with: "
            f"{FAKE_KEY_VAR}=... pytest * --eval-max-items 2 -rA --eval-record-mode=once",
        ]
    )
    assert "Traceback" not in result.stdout.str() and "How to fix" not in result.stdout.str()
    summary = read_summary(pytester, "fake", subset=True)
    assert summary["errors_by_kind"] == {"cassette_miss": 2, "provider": 0, "harness": 0} and summary["num_errors"] == 2
    first = json.loads(
        (the_run(pytester.path / "results", "fake", subset=True) / "completions.jsonl").read_text().splitlines()[0]
    )
    # the sample's first item, whichever it is
    item = first["id"]
    assert (
        first["error"]
        == f"cassette miss for item '{item}': no cassette file: {pytester.path / 'cassettes' / 'fake' / 'bank-zeroshot' / f'{item}.yaml'}"
    )


@pytest.mark.parametrize("workers", ["0", "2"])
def test_refused_key_stops_the_session_once(pytester, server, workers: str) -> None:
    add_eval_module(pytester)
    server.script(*[status(401)] * 20)
    result = fake_run(
        pytester, server.openai_base, "-n", workers, "--eval-record-mode", "once", "--eval-concurrency", "1"
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert len(server.requests) <= max(1, int(workers)), (
        "one refused call per process at most (N per process: integration/test_concurrency.py)"
    )
    result.stdout.fnmatch_lines([f"*model key refused: *refused the key in {FAKE_KEY_VAR}*HTTP 401*"])
    reason = read_summary(pytester, "fake")["incomplete_reason"]
    # the stop, not a harness bug
    assert reason.startswith("model key refused") and "harness error" not in reason, reason
