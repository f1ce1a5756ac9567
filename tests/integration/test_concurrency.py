"""--eval-concurrency: calls in flight per process, against the fake provider over real HTTP.

What a sequential run produces (items, records, summaries, cassettes) must not depend on N; a
429 lowers the calls in flight; the budget is overshot by at most N calls per process; a refused
key sends nothing more; a killed run pays again for nothing but what was in flight.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from fakeprovider import FakeProvider, status
from helpers import (
    DIALECTIC_MODULE,
    add_eval_module,
    answer_by_text,
    bodies,
    fake_run_args,
    question,
    tagged_run_args,
    the_run,
    write_jsonl,
)

from pytest_reasoning_evals.providers.http import LATENCY_HEADER

# every test here runs whole sessions, each over a second, as the fake model with its key set
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fake_key")]


def bank(pytester, questions: int, dialogues: int = 1) -> str:
    records = [question(f"q-{i:03d}", "TRUE" if i % 3 else "FALSE") for i in range(questions)]
    for d in range(dialogues):
        records += [
            question(f"d{d}-t{t}", "TRUE" if (d + t) % 2 else "FALSE", family="multi_hop", dialogue_id=f"d{d}", turn=t)
            for t in (1, 2, 3)
        ]
    return str(write_jsonl(pytester.path / "bank.jsonl", records))


def requests_in(cassettes) -> dict[str, list]:
    """Each cassette file (by name) -> the request bodies it recorded (the replies carry a random id)."""
    import yaml

    return {
        p.relative_to(cassettes).as_posix(): [
            i["request"]["body"] for i in yaml.safe_load(p.read_text())["interactions"]
        ]
        for p in sorted(cassettes.rglob("*.yaml"))
    }


def test_the_same_items_records_summary_and_cassettes_with_1_or_16_calls_in_flight(pytester) -> None:
    add_eval_module(pytester)
    cases = bank(pytester, 40)
    outputs = {}
    for concurrency, workers in (("1", "0"), ("16", "0"), ("16", "2")):
        with FakeProvider() as server:
            server.responder = answer_by_text
            server.delay = 0.05
            server.extra_headers = {LATENCY_HEADER: "200"}  # a latency that does not depend on the run
            if concurrency != "1":  # held until 8 overlap: a loaded machine cannot make them miss each other
                server.overlap = 8
            tag = f"c{concurrency}-n{workers}"
            result = pytester.runpytest_subprocess(
                *tagged_run_args(pytester, server.openai_base, tag, cases),
                "--eval-concurrency",
                concurrency,
                "-n",
                workers,
            )
            assert result.ret == 0, result.stdout.str()  # wrong answers fail their items, not the run
            run = the_run(pytester.path / f"results-{tag}", "fake")
            outputs[tag] = {
                "summary": (run / "summary.json").read_bytes(),
                "completions": (run / "completions.jsonl").read_bytes(),
                "cassettes": requests_in(pytester.path / f"cassettes-{tag}"),
                "asked": bodies(server),
                "outcomes": result.parseoutcomes(),
            }
            in_flight = server.max_in_flight
        if concurrency == "1":
            assert in_flight == 1
        else:  # the calls did run together: what makes a live run fast
            assert in_flight >= 8, in_flight
    sequential = outputs.pop("c1-n0")
    assert len(sequential["asked"]) == 40 + 3 and len(sequential["cassettes"]) == 40 + 1
    for tag, concurrent in outputs.items():
        assert concurrent == sequential, tag


SCHEDULER_SPY = """
import pytest

made = []


@pytest.hookimpl(wrapper=True)
def pytest_xdist_make_scheduler(config, log):
    made.append((yield))
    return made[-1]


def pytest_sessionfinish(session):
    if made:
        (session.config.rootpath / "scheduler.txt").write_text(made[0].__class__.__name__)
"""


def test_questions_asked_by_a_test_function_of_the_teams_own_name_are_kept_queued_for_their_calls_to_run_ahead(
    pytester,
) -> None:
    """The scheduler keeps enough questions queued on each worker for their calls to run ahead,
    whatever the team named the imported test function: the protocol knows its items."""
    pytester.makepyfile(
        test_exam="from pytest_reasoning_evals.chaosbench.items import test_question as test_exam_question  # noqa"
    )
    pytester.makeconftest(SCHEDULER_SPY)
    cases = bank(pytester, 60, dialogues=0)
    with FakeProvider() as server:
        server.responder, server.delay = answer_by_text, 0.05
        args = fake_run_args(pytester, server.openai_base, cases, out_dir=True)
        result = pytester.runpytest_subprocess("test_exam.py", *args, "--eval-concurrency", "16", "-n", "2")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*20 passed, 40 wrong*"])  # every question answered
    assert (pytester.path / "scheduler.txt").read_text() == "AheadScheduling"
    assert "test_exam_question[q-000]" in pytester.runpytest("test_exam.py", *args, "--collect-only", "-q").stdout.str()


def test_429s_lower_the_calls_in_flight_and_every_item_is_still_answered(pytester) -> None:
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.responder = answer_by_text
        server.delay = 0.02
        server.capacity = 2  # a provider that takes 2 calls at once and refuses the rest with a 429
        result = pytester.runpytest_subprocess(
            *tagged_run_args(pytester, server.openai_base, "limited", bank(pytester, 100, dialogues=0)),
            "--eval-concurrency",
            "16",
        )
        run = the_run(pytester.path / "results-limited", "fake")
        summary = json.loads((run / "summary.json").read_text())
        assert summary["total_questions"] == 100 and summary["num_errors"] == 0, result.stdout.str()
        # Without backing off, 14 of every 16 calls would get a 429 on each try (and most items
        # would fail after their retries); halving on a 429 keeps them to a fraction of the items.
        assert 0 < server.rate_limited < 100, server.rate_limited
        assert len(server.requests) == 100 + server.rate_limited


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_refused_key_stops_the_run_with_at_most_the_calls_in_flight(pytester, workers: str) -> None:
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.delay = 0.1
        server.script(*[status(401)] * 200)
        result = pytester.runpytest_subprocess(
            *tagged_run_args(pytester, server.openai_base, "refused", bank(pytester, 60)),
            "--eval-concurrency",
            "8",
            "-n",
            workers,
        )
        assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
        result.stdout.fnmatch_lines(["*model key refused: *refused the key in FAKE_PROVIDER_KEY*"])
        assert len(server.requests) <= 8 * max(1, int(workers)), len(server.requests)
        assert not list((pytester.path / "cassettes-refused").rglob("*.yaml"))


@pytest.mark.parametrize("workers", ["0", "2"])
def test_max_cost_is_overshot_by_at_most_the_calls_in_flight_and_resume_pays_nothing_twice(
    pytester, workers: str
) -> None:
    add_eval_module(pytester)
    cases = bank(pytester, 40)
    with FakeProvider() as server:  # 12 prompt tokens at $250,000 per 1M: $3 a call
        server.responder = answer_by_text
        server.delay = 0.02
        args = tagged_run_args(pytester, server.openai_base, "budget", cases, price_in=250_000.0)
        result = pytester.runpytest_subprocess(*args, "--eval-max-cost", "10", "--eval-concurrency", "8", "-n", workers)
        assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
        asked = len(server.requests)
        assert 4 <= asked <= 4 + 8 * max(1, int(workers)), asked  # $12 after 4 calls, plus at most N per process

        resumed = pytester.runpytest_subprocess(*args, "--eval-resume", "--eval-concurrency", "8", "-n", workers)
        assert resumed.ret == 0, resumed.stdout.str()
        summary = json.loads((the_run(pytester.path / "results-budget", "fake") / "summary.json").read_text())
        assert summary["not_asked"]["count"] == 0 and summary["total_questions"] == 40
        assert len(bodies(server)) == len(set(bodies(server))) == 40 + 3, "every call was paid once over both runs"


def run_until_held(pytester, server: FakeProvider, args: list[str], held: int) -> subprocess.Popen:
    """pytest ARGS in a process of its own (its output kept for communicate()), once the server
    holds `held` of its requests unanswered (or two minutes passed, or the run ended)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", *args],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 120
    while server.held < held and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    return process


def test_sigkill_with_calls_in_flight_then_resume_pays_no_answered_call_twice(pytester) -> None:
    add_eval_module(pytester)
    cases = bank(pytester, 30)
    with FakeProvider() as reference:
        reference.responder = answer_by_text
        whole = pytester.runpytest_subprocess(
            *tagged_run_args(pytester, reference.openai_base, "whole", cases), "--eval-concurrency", "1"
        )
        assert whole.ret == 0, whole.stdout.str()
        expected_bodies = bodies(reference)
    expected = json.loads((the_run(pytester.path / "results-whole", "fake") / "summary.json").read_text())

    with FakeProvider() as server:
        server.responder = answer_by_text
        server.hold_after = 10  # ten calls answered (some of items not run yet), the rest hang
        args = tagged_run_args(pytester, server.openai_base, "killed", cases)
        process = run_until_held(pytester, server, [*args, "--eval-concurrency", "8"], held=1)
        assert server.held >= 1, "the run never reached a held request"
        time.sleep(1.0)  # the answered calls reach their cassettes
        os.kill(process.pid, signal.SIGKILL)
        process.communicate()  # reaped, its output drained
        saved = list((pytester.path / "cassettes-killed").rglob("*.yaml"))
        assert len(saved) == 10, "every answered call was saved, its item run or not"

        server.hold_after = None
        resumed = pytester.runpytest_subprocess(*args, "--eval-resume", "--eval-concurrency", "8")
        assert resumed.ret == 0, resumed.stdout.str()
        assert bodies(server) == expected_bodies, "each request answered exactly once over both runs"
    assert json.loads((the_run(pytester.path / "results-killed", "fake") / "summary.json").read_text()) == expected


def test_ctrl_c_while_calls_hang_ends_the_run_at_once_and_keeps_what_was_answered(pytester) -> None:
    """Ctrl-C while the provider holds calls unanswered: the calls on the wire are cut (not waited
    out for the 120 s request timeout), the answered items are in the run's files, and a resume
    asks no answered request again."""
    add_eval_module(pytester)
    cases = bank(pytester, 30, dialogues=0)
    with FakeProvider() as server:
        server.responder = answer_by_text
        server.hold_after = 10  # ten calls answered, the rest hang
        args = tagged_run_args(pytester, server.openai_base, "stopped", cases)
        process = run_until_held(pytester, server, [*args, "--eval-concurrency", "4"], held=4)
        time.sleep(0.5)  # the answered calls reach their items
        process.send_signal(signal.SIGINT)
        try:
            output = process.communicate(timeout=60)[0]  # the request timeout is 120 s
        except subprocess.TimeoutExpired:
            process.kill()
            pytest.fail("Ctrl-C waited for the calls the provider held")
        assert process.returncode == pytest.ExitCode.INTERRUPTED, output
        kept = json.loads((the_run(pytester.path / "results-stopped", "fake") / "summary.json").read_text())
        assert kept["total_questions"] >= 1, output
        server.hold_after = None
        resumed = pytester.runpytest_subprocess(*args, "--eval-resume", "--eval-concurrency", "4")
        assert resumed.ret == 0, resumed.stdout.str()
        answered = [json.dumps(r["body"], sort_keys=True) for r in server.requests]
    assert len(answered) == len(set(answered)) == 30, "each question answered once over both runs"


def test_questions_run_ahead_when_the_dialectic_asked_the_same_model_first(pytester) -> None:
    # The dialectic module is collected first, so its runner builds the model before any
    # question: the questions still get a model of their own that runs calls ahead.
    pytester.makepyfile(test_a_dialectic_items=DIALECTIC_MODULE)  # not tests/test_dialectic.py's module name
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.responder = answer_by_text
        server.delay = 0.05
        result = pytester.runpytest_subprocess(
            "test_a_dialectic_items.py",
            *tagged_run_args(pytester, server.openai_base, "both", bank(pytester, 40, dialogues=0)),
            "--eval-max-items",
            "40",
            "--eval-concurrency",
            "8",
        )
        assert "dialectic summary" in result.stdout.str() and "eval summary" in result.stdout.str(), result.stdout.str()
        assert server.max_in_flight >= 4, server.max_in_flight
