"""--eval-reprompt: an UNKNOWN answer to a question is asked again in the same conversation, the
reprompt is recorded in the item's cassette and replayed, and a run below the default coverage
floor fails (issue 28, items 1 and 2). Real HTTP against the fake provider on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml
from fakeprovider import FakeProvider, status
from helpers import cassette_path, fake_run_args, four_questions, small_bank, the_run

from pytest_reasoning_evals.chaosbench.prompts import REPROMPT

BABBLE = "Let me think about the dynamics of this system for a while."


def babble_then(answer: str | None):
    """A model that babbles to a question and answers `answer` when reprompted (None: babbles again)."""

    def respond(body: dict) -> str:
        reprompted = body["messages"][-1]["content"] == REPROMPT
        return answer if reprompted and answer is not None else BABBLE

    return respond


def completions(pytester: pytest.Pytester, tag: str = "") -> dict[str, dict]:
    folder = the_run(pytester.path / (f"results-{tag}" if tag else "results"), "fake")
    return {r["id"]: r for r in map(json.loads, (folder / "completions.jsonl").read_text().splitlines())}


def summary_of(pytester: pytest.Pytester, tag: str = "") -> dict:
    folder = the_run(pytester.path / (f"results-{tag}" if tag else "results"), "fake")
    return json.loads((folder / "summary.json").read_text())


def interactions(pytester: pytest.Pytester, item_id: str, tag: str = "") -> list[dict]:
    path = cassette_path(pytester.path / (f"cassettes-{tag}" if tag else "cassettes"), "fake", "bank-zeroshot", item_id)
    return yaml.safe_load(path.read_text())["interactions"]


def test_a_babbling_reply_then_true_on_reprompt_gives_coverage_one_and_replays(
    recording_evals: pytest.Pytester,
) -> None:
    bank = four_questions(recording_evals)
    with FakeProvider() as server:
        server.responder = babble_then("TRUE")
        args = fake_run_args(recording_evals, server.openai_base, bank)
        result = recording_evals.runpytest_subprocess(*args)
        assert result.ret == 0, result.stdout.str()
        assert len(server.requests) == 8, "each question: the question, then one reprompt"
        again = [r["body"]["messages"] for r in server.requests if len(r["body"]["messages"]) > 1]
        assert len(again) == 4
        # the same conversation: the question, the model's own reply, the one-word instruction
        assert all(
            [m["role"] for m in messages] == ["user", "assistant", "user"]
            and messages[1]["content"] == BABBLE
            and messages[2]["content"] == REPROMPT
            for messages in again
        )
    summary = summary_of(recording_evals)
    assert (summary["coverage"], summary["reprompted"], summary["rescued_by_reprompt"]) == (1.0, 4, 4)
    assert summary["overall_accuracy"] == 0.5  # TRUE to two TRUE and two FALSE questions
    record = completions(recording_evals)["q-true-1"]
    assert (record["raw_text"], record["reprompts"], record["reprompt_replies"], record["label_from"]) == (
        BABBLE,
        1,
        ["TRUE"],
        1,
    )
    assert (record["label"], record["status"]) == ("TRUE", "correct")
    # usage counts both calls (the fake server reports 12 in / 3 out per call)
    assert (record["input_tokens"], record["output_tokens"]) == (24, 6)
    # one cassette holds both calls
    assert len(interactions(recording_evals, "q-true-1")) == 2
    result.stdout.fnmatch_lines(["*coverage 100.0%*asked again 4, rescued by the reprompt 4*"])
    page = (the_run(recording_evals.path / "results", "fake") / "report.html").read_text()
    assert "rescued by the reprompt" in page and '"reprompts":["TRUE"]' in page.replace(" ", "")

    # the replay: nothing listens any more, every call comes from the cassettes
    replay = recording_evals.runpytest_subprocess(*args[:-4], "--eval-record-mode", "none", "-p", "no:cacheprovider")
    assert replay.ret == 0, replay.stdout.str()
    assert "cassette miss" not in replay.stdout.str()
    replayed = summary_of(recording_evals)
    assert (replayed["coverage"], replayed["rescued_by_reprompt"]) == (1.0, 4)
    assert completions(recording_evals)["q-false-1"]["reprompt_replies"] == ["TRUE"]
    assert completions(recording_evals)["q-false-1"]["cassette_hit"] is True


def test_an_unreadable_run_fails_with_no_gate_option(recording_evals: pytest.Pytester) -> None:
    with FakeProvider() as server:
        server.responder = babble_then(None)
        result = recording_evals.runpytest_subprocess(
            *fake_run_args(recording_evals, server.openai_base, four_questions(recording_evals))
        )
        assert len(server.requests) == 8, "asked once more by default"
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "gate min-coverage: FAILED (coverage 0.0000 (questions answered TRUE/FALSE), required >= 0.8 by default; "
            "change the floor with --eval-min-coverage X (ini eval_min_coverage; 0 turns it off))"
        ]
    )
    result.stdout.fnmatch_lines(["*UNKNOWN (expected TRUE): no TRUE/FALSE in reply (asked 2 times)*"])
    summary = summary_of(recording_evals)
    assert (summary["coverage"], summary["reprompted"], summary["rescued_by_reprompt"]) == (0.0, 4, 0)
    assert completions(recording_evals)["q-true-1"]["label_from"] is None


def test_the_floor_is_changed_by_the_option_and_the_ini(recording_evals: pytest.Pytester) -> None:
    bank = four_questions(recording_evals)
    with FakeProvider() as server:
        server.responder = lambda body: "TRUE" if "q-true" in body["messages"][0]["content"] else BABBLE
        args = fake_run_args(recording_evals, server.openai_base, bank)
        # half the questions answered
        assert recording_evals.runpytest_subprocess(*args).ret == pytest.ExitCode.TESTS_FAILED
        lowered = recording_evals.runpytest_subprocess(*args, "--eval-min-coverage", "0.5")
        assert lowered.ret == 0, lowered.stdout.str()
        lowered.stdout.fnmatch_lines(
            ["gate min-coverage: passed (coverage 0.5000 (answers with a TRUE/FALSE), required >= 0.5)"]
        )
        recording_evals.makeini("[pytest]\neval_min_coverage = 0\n")
        assert recording_evals.runpytest_subprocess(*args).ret == 0


def test_reprompt_asks_up_to_n_times_and_zero_turns_it_off(recording_evals: pytest.Pytester) -> None:
    bank = four_questions(recording_evals)
    with FakeProvider() as server:
        server.responder = babble_then(None)
        args = fake_run_args(recording_evals, server.openai_base, bank, tag="n2", out_dir=True)
        result = recording_evals.runpytest_subprocess(*args, "--eval-reprompt", "2", "--eval-min-coverage", "0")
        assert result.ret == 0, result.stdout.str()
        assert len(server.requests) == 12
        longest = max(len(r["body"]["messages"]) for r in server.requests)
        assert longest == 5, "question, reply, reprompt, reply, reprompt"
        record = completions(recording_evals, "n2")["q-true-1"]
        assert (record["reprompts"], record["reprompt_replies"], record["label_from"]) == (2, [BABBLE, BABBLE], None)
        result.stdout.fnmatch_lines(["*UNKNOWN (expected TRUE): no TRUE/FALSE in reply (asked 3 times)*"])

        asked = len(server.requests)
        off = fake_run_args(recording_evals, server.openai_base, bank, tag="off", out_dir=True)
        result = recording_evals.runpytest_subprocess(*off, "--eval-reprompt", "0", "--eval-min-coverage", "0")
        assert result.ret == 0, result.stdout.str()
        assert len(server.requests) - asked == 4
        record = completions(recording_evals, "off")["q-true-1"]
        assert (record["reprompts"], record["reprompt_replies"], record["label_from"]) == (0, [], None)
        assert "asked again" not in result.stdout.str()


def test_a_negative_reprompt_is_a_usage_error(recording_evals: pytest.Pytester) -> None:
    result = recording_evals.runpytest("--model", "oracle", "--eval-reprompt", "-1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--eval-reprompt must be >= 0, got -1*"])


def test_a_cassette_without_the_reprompt_misses_and_refresh_records_only_the_reprompt(
    recording_evals: pytest.Pytester,
) -> None:
    bank = four_questions(recording_evals)
    with FakeProvider() as server:
        server.responder = babble_then("FALSE")
        args = fake_run_args(recording_evals, server.openai_base, bank)
        # recorded before reprompts: one call per cassette
        assert recording_evals.runpytest_subprocess(*args, "--eval-reprompt", "0", "--eval-min-coverage", "0").ret == 0
        before = cassette_path(recording_evals.path / "cassettes", "fake", "bank-zeroshot", "q-true-1").read_bytes()
        asked = len(server.requests)

        replay = recording_evals.runpytest_subprocess(
            *args[:-4], "--eval-record-mode", "none", "-p", "no:cacheprovider"
        )
        assert replay.ret == pytest.ExitCode.TESTS_FAILED
        assert len(server.requests) == asked
        replay.stdout.fnmatch_lines(["CASSETTE MISSES: 4 items have no matching cassette*--eval-record-mode=refresh*"])
        assert summary_of(recording_evals)["errors_by_kind"]["cassette_miss"] == 4

        refresh = recording_evals.runpytest_subprocess(
            *args[:-4], "--eval-record-mode", "refresh", "-p", "no:cacheprovider"
        )
        assert refresh.ret == 0, refresh.stdout.str()
        # only the reprompts were asked; the first calls replayed and kept their bytes
        assert [len(r["body"]["messages"]) for r in server.requests[asked:]] == [3, 3, 3, 3]
        recorded = interactions(recording_evals, "q-true-1")
        assert len(recorded) == 2
        after = cassette_path(recording_evals.path / "cassettes", "fake", "bank-zeroshot", "q-true-1").read_bytes()
        assert after.startswith(before[: before.index(b"version:")])
        assert summary_of(recording_evals)["rescued_by_reprompt"] == 4


def test_dialogue_turns_are_not_reprompted(recording_evals: pytest.Pytester) -> None:
    bank = small_bank(recording_evals.path / "bank.jsonl", dialogues=2, turns=3, questions=0)
    with FakeProvider() as server:
        server.responder = babble_then("TRUE")
        result = recording_evals.runpytest_subprocess(*fake_run_args(recording_evals, server.openai_base, bank))
        assert len(server.requests) == 6, "three turns of two dialogues, none asked again"
        assert all(r["body"]["messages"][-1]["content"] != REPROMPT for r in server.requests)
    # no question: the default floor has nothing to judge
    assert result.ret == 0, result.stdout.str()
    assert "gate min-coverage" not in result.stdout.str()
    turn = completions(recording_evals)["d0"]["turns"][0]
    assert (turn["reprompts"], turn["reprompt_replies"], turn["label_from"]) == (0, [], None)


def test_reprompts_run_in_order_after_calls_made_ahead(recording_evals: pytest.Pytester) -> None:
    """--eval-concurrency: a question's first call runs ahead; its reprompt follows it in the same cassette."""
    bank = small_bank(recording_evals.path / "bank.jsonl", dialogues=0, questions=12)
    with FakeProvider() as server:
        server.responder = babble_then("TRUE")
        server.delay, server.overlap = 0.05, 2  # held until 2 overlap, however loaded the machine
        args = fake_run_args(recording_evals, server.openai_base, bank, tag="ahead", out_dir=True)
        result = recording_evals.runpytest_subprocess(*args, "--eval-concurrency", "4")
        assert result.ret == 0, result.stdout.str()
        assert server.max_in_flight > 1, "calls ran ahead"
        assert len(server.requests) == 24
    for n in range(12):
        recorded = interactions(recording_evals, f"q-{n:02d}", tag="ahead")
        assert [len(json.loads(i["request"]["body"])["messages"]) for i in recorded] == [1, 3]
    assert summary_of(recording_evals, "ahead")["rescued_by_reprompt"] == 12


def test_merge_applies_the_default_floor(recording_evals: pytest.Pytester) -> None:
    bank = four_questions(recording_evals)
    with FakeProvider() as server:
        server.responder = babble_then(None)
        for index in (0, 1):
            shard = ("--eval-num-shards", "2", "--eval-shard-index", str(index), "--eval-min-coverage", "0")
            assert (
                recording_evals.runpytest_subprocess(
                    *fake_run_args(recording_evals, server.openai_base, bank), *shard
                ).ret
                == 0
            )
    shards = sorted(str(path) for path in (recording_evals.path / "results").glob("fake_zeroshot_*_shard*of2"))
    assert len(shards) == 2
    merge = [sys.executable, "-m", "pytest_reasoning_evals", "merge", *shards]
    failed = subprocess.run(merge, capture_output=True, text=True, cwd=recording_evals.path)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "required >= 0.8 by default; change the floor with --min-coverage X (0 turns it off)" in failed.stdout
    passed = subprocess.run([*merge, "--min-coverage", "0"], capture_output=True, text=True, cwd=recording_evals.path)
    assert passed.returncode == 0, passed.stdout + passed.stderr


def test_the_report_of_records_from_before_the_reprompt_is_written(recording_evals: pytest.Pytester) -> None:
    """Records without the reprompt's fields (an older run's completions.jsonl) still make a page."""
    with FakeProvider() as server:
        server.responder = babble_then("TRUE")
        assert (
            recording_evals.runpytest_subprocess(
                *fake_run_args(recording_evals, server.openai_base, four_questions(recording_evals))
            ).ret
            == 0
        )
    folder = the_run(recording_evals.path / "results", "fake")
    old = [
        {k: v for k, v in record.items() if k not in ("reprompts", "reprompt_replies", "label_from")}
        for record in completions(recording_evals).values()
    ]
    (folder / "completions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))
    (folder / "report.html").unlink()
    report = [sys.executable, "-m", "pytest_reasoning_evals", "report", str(folder)]
    done = subprocess.run(report, capture_output=True, text=True, cwd=recording_evals.path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert BABBLE in (folder / "report.html").read_text()


def test_a_budget_spent_before_the_reprompt_leaves_the_item_not_asked_and_resume_finishes_it(
    recording_evals: pytest.Pytester,
) -> None:
    """The reprompt is a call like any other: the budget may stop it; the item is then not asked,
    what its first call cost is reported, and a resume replays that call and asks only the reprompt."""
    bank = four_questions(recording_evals)
    with FakeProvider() as server:  # 12 prompt tokens at $250,000 per 1M: $3 a call
        server.responder = babble_then("TRUE")
        args = fake_run_args(recording_evals, server.openai_base, bank, price_in=250_000.0)
        stopped = recording_evals.runpytest_subprocess(*args, "--eval-max-cost", "2", "--eval-concurrency", "1")
        assert stopped.ret == pytest.ExitCode.TESTS_FAILED, stopped.stdout.str()
        assert len(server.requests) == 1, "the first question's call; its reprompt is over the budget"
        summary = summary_of(recording_evals)
        assert (summary["not_asked"]["count"], summary["cost_usd"]) == (4, pytest.approx(3.0))

        resumed = recording_evals.runpytest_subprocess(*args, "--eval-resume")
        assert resumed.ret == 0, resumed.stdout.str()
        bodies = [json.dumps(r["body"], sort_keys=True) for r in server.requests]
        assert len(bodies) == len(set(bodies)) == 8, "nothing paid twice"
    final = summary_of(recording_evals)
    assert (final["not_asked"]["count"], final["rescued_by_reprompt"], final["coverage"]) == (0, 4, 1.0)


def refuse_reprompts(body: dict):
    """A provider that refuses the key on every reprompt (the first call of each question is paid)."""
    return status(401) if body["messages"][-1]["content"] == REPROMPT else None


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_reprompt_refused_after_a_paid_reply_keeps_that_reply_and_its_cost(
    recording_evals: pytest.Pytester, workers
) -> None:
    """A refused key stops the run; what the first call of the stopped item paid stays in its record,
    summary.json and run_meta.json's spent_usd (issue 38: it was reported as 0.0)."""
    bank = four_questions(recording_evals)
    with FakeProvider() as server:  # 12 prompt tokens at $1,250 per 1M: $0.015 a call
        server.responder = babble_then("TRUE")
        server.fault_for = refuse_reprompts
        args = fake_run_args(recording_evals, server.openai_base, bank, price_in=1250.0)
        result = recording_evals.runpytest_subprocess(*args, "-n", workers, "--eval-concurrency", "1")
        assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
        paid = [r for r in server.requests if refuse_reprompts(r["body"]) is None]
    assert paid, "at least one question's first call was answered"
    folder = the_run(recording_evals.path / "results", "fake")
    records = completions(recording_evals)
    meta = json.loads((folder / "run_meta.json").read_text())
    assert sum(r["cost_usd"] for r in records.values()) == pytest.approx(0.015 * len(paid))
    assert summary_of(recording_evals)["cost_usd"] == pytest.approx(0.015 * len(paid))
    assert meta["spent_usd"] == pytest.approx(0.015 * len(paid))
    refused = [r for r in records.values() if r["error"] and "refused the key" in r["error"]]
    assert refused and all(r["raw_text"] == BABBLE and r["cost_usd"] == pytest.approx(0.015) for r in refused)


BROKEN_REPROMPT = """
import pytest


class Broken:
    def __init__(self, prompt):
        self.prompt = prompt

    def __getattr__(self, name):
        return getattr(self.prompt, name)

    def reprompt(self, request, reply):
        raise RuntimeError("a bug while reprompting")


@pytest.fixture(scope="session")
def chaosbench_prompt(chaosbench_prompt):
    return Broken(chaosbench_prompt)
"""


def test_an_item_that_raises_after_a_paid_call_reports_what_it_paid(recording_evals: pytest.Pytester) -> None:
    """A harness error after the first call (here a conftest's prompt that breaks on the reprompt):
    the run's summary.json and run_meta.json's spent_usd hold what that call paid."""
    recording_evals.makeconftest(BROKEN_REPROMPT)
    bank = four_questions(recording_evals)
    with FakeProvider() as server:  # $0.015 a call
        server.responder = babble_then("TRUE")
        args = fake_run_args(recording_evals, server.openai_base, bank, price_in=1250.0)
        result = recording_evals.runpytest_subprocess(*args, "--eval-concurrency", "1")
        assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
        assert len(server.requests) == 4
    meta = json.loads((the_run(recording_evals.path / "results", "fake") / "run_meta.json").read_text())
    assert summary_of(recording_evals)["cost_usd"] == meta["spent_usd"] == pytest.approx(0.015 * 4)


PID_CONFTEST = (
    "import os, pathlib\n\ndef pytest_configure(config):\n    pathlib.Path('pid').write_text(str(os.getpid()))\n"
)


def test_an_item_interrupted_after_a_paid_call_reports_what_it_paid(recording_evals: pytest.Pytester) -> None:
    """Ctrl-C while the second question's reprompt is on the wire: that item makes no report, yet what
    its first call paid is in summary.json and run_meta.json's spent_usd (issue 38: every stop reason)."""
    bank = four_questions(recording_evals)
    recording_evals.makeconftest(PID_CONFTEST)
    reprompts = []

    def interrupt_on_reprompt(body: dict):
        reprompts.append(body["messages"][-1]["content"] == REPROMPT)
        if reprompts[-1] and sum(reprompts) == 2:
            os.kill(int((recording_evals.path / "pid").read_text()), signal.SIGINT)
            time.sleep(2)  # the reply comes after the interrupt has stopped the item
            return status(503)
        return None

    with FakeProvider() as server:  # 12 prompt tokens at $1,250 per 1M: $0.015 a call
        server.responder = babble_then("TRUE")
        server.fault_for = interrupt_on_reprompt
        args = fake_run_args(recording_evals, server.openai_base, bank, price_in=1250.0)
        result = recording_evals.runpytest_subprocess(*args, "--eval-concurrency", "1")
        assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    # paid: the first question and its reprompt, the second question's first call
    meta = json.loads((the_run(recording_evals.path / "results", "fake") / "run_meta.json").read_text())
    assert summary_of(recording_evals)["cost_usd"] == meta["spent_usd"] == pytest.approx(3 * 0.015)
