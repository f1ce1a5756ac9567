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
import threading
import time

import pytest
from fakeprovider import FakeProvider, status
from helpers import DIALECTIC_MODULE, add_eval_module, answer_by_text, fake_run_args, question, write_jsonl

from pytest_reasoning_evals.providers.base import Request
from pytest_reasoning_evals.providers.http import LATENCY_HEADER, AuthError, HttpModel, Limiter, RetryPolicy
from pytest_reasoning_evals.registry import ModelSpec

KEY_VAR = "FAKE_PROVIDER_KEY"


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_VAR, "fake-key-for-tests")


def bank(pytester, questions: int, dialogues: int = 1) -> str:
    records = [question(f"q-{i:03d}", "TRUE" if i % 3 else "FALSE") for i in range(questions)]
    for d in range(dialogues):
        records += [
            question(f"d{d}-t{t}", "TRUE" if (d + t) % 2 else "FALSE", family="multi_hop", dialogue_id=f"d{d}", turn=t)
            for t in (1, 2, 3)
        ]
    return str(write_jsonl(pytester.path / "bank.jsonl", records))


def run_args(pytester, server: FakeProvider, tag: str, cases: str, price_in: float = 0.0) -> list[str]:
    return ["test_chaosbench.py", *fake_run_args(pytester, server.openai_base, cases, tag, price_in, out_dir=True)]


def bodies(server: FakeProvider) -> list[str]:
    return sorted(json.dumps(r["body"], sort_keys=True) for r in server.requests)


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
            tag = f"c{concurrency}-n{workers}"
            result = pytester.runpytest_subprocess(
                *run_args(pytester, server, tag, cases), "--eval-concurrency", concurrency, "-n", workers
            )
            assert result.ret == 0, result.stdout.str()  # wrong answers fail their items, not the run
            run = pytester.path / f"results-{tag}" / "fake_zeroshot"
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


def test_429s_lower_the_calls_in_flight_and_every_item_is_still_answered(pytester) -> None:
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.responder = answer_by_text
        server.delay = 0.02
        server.capacity = 2  # a provider that takes 2 calls at once and refuses the rest with a 429
        result = pytester.runpytest_subprocess(
            *run_args(pytester, server, "limited", bank(pytester, 100, dialogues=0)), "--eval-concurrency", "16"
        )
        run = pytester.path / "results-limited" / "fake_zeroshot"
        summary = json.loads((run / "summary.json").read_text())
        assert summary["total_questions"] == 100 and summary["num_errors"] == 0, result.stdout.str()
        # Without backing off, 14 of every 16 calls would get a 429 on each try (and most items
        # would fail after their retries); halving on a 429 keeps them to a fraction of the items.
        assert 0 < server.rate_limited < 100, server.rate_limited
        assert len(server.requests) == 100 + server.rate_limited


def test_the_limiter_halves_on_a_429_once_a_round_and_grows_back() -> None:
    limiter = Limiter(16)
    tickets = [limiter.acquire() for _ in range(16)]
    contention = [limiter.release(ticket, 429) for ticket in tickets[:10]]  # ten 429s of one round: one cut
    assert (limiter.limit, limiter.rate_limited, limiter.in_flight) == (8, 10, 6)
    assert contention == [True] * 10, "429s with more than one call allowed in flight are the process's own"
    for ticket in tickets[10:]:
        limiter.release(ticket, 200)
    second = limiter.acquire()
    limiter.release(second, 429)  # a new round: cut again
    assert limiter.limit == limiter.lowest == 4
    for _ in range(4):
        limiter.release(limiter.acquire(), 200)
    assert limiter.limit == 5, "limit successes in a row raise it by one"
    for _ in range(200):
        limiter.release(limiter.acquire(), 200)
    assert limiter.limit == 16, "never above the ceiling"
    while limiter.limit > 1:
        limiter.release(limiter.acquire(), 429)
    assert limiter.release(limiter.acquire(), 429) is False, "a 429 at one call in flight is the call's own"
    sequential = Limiter(1)
    assert sequential.release(sequential.acquire(), 429) is False, "sequential calls never retry for free"


def test_a_burst_against_a_tighter_limit_does_not_use_up_the_calls_retries() -> None:
    """32 calls at once against a provider that takes 1: the limit comes down in 5 cuts and then
    probes upwards again, 429s that would fail calls meeting several of them after their 5
    attempts; a 429 with more than one call allowed in flight does not count against them."""
    spec = ModelSpec(alias="fake", provider="openai", model_id="fake-model", api_key_env=KEY_VAR)
    policy = RetryPolicy(max_retries=4, backoff_base=0.0, backoff_max=0.0, jitter=0.0, timeout=5.0)
    with FakeProvider() as server:
        server.delay = 0.02
        server.capacity = 1
        model = HttpModel(spec, policy, base_url=server.openai_base)
        model.allow_concurrency(32)
        barrier = threading.Barrier(32)
        errors: list[str | None] = []

        def call(n: int) -> None:
            barrier.wait()
            errors.append(
                model.complete(
                    Request(item_id=f"q{n}", cassette_folder="s", messages=({"role": "user", "content": f"q{n}"},))
                ).error
            )

        threads = [threading.Thread(target=call, args=(n,)) for n in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == [None] * 32, errors
    assert server.rate_limited >= 31 and model.limiter.lowest == 1


def test_the_limiter_makes_attempts_wait_for_a_slot() -> None:
    limiter = Limiter(2)
    first, second = limiter.acquire(), limiter.acquire()
    started = threading.Event()

    def third() -> None:
        limiter.acquire()
        started.set()

    thread = threading.Thread(target=third)
    thread.start()
    assert not started.wait(0.2), "a third attempt waits while two are in flight"
    limiter.release(first, 200)
    assert started.wait(5)
    thread.join()
    limiter.release(second, 200)


def test_a_refused_key_under_concurrency_sends_nothing_after_the_refusal() -> None:
    spec = ModelSpec(alias="fake", provider="openai", model_id="fake-model", api_key_env=KEY_VAR)
    with FakeProvider() as server:
        server.delay = 0.3
        # The first wave is all refused: had one of them been answered before the first 401 was
        # read, its free slot would rightly have sent a fifth request before the refusal was known.
        server.script(*[status(401)] * 4)
        model = HttpModel(spec, base_url=server.openai_base)
        model.allow_concurrency(4)
        outcomes: list[str] = []

        def call(n: int) -> None:
            try:
                model.complete(
                    Request(item_id=f"q{n}", cassette_folder="s", messages=({"role": "user", "content": f"q{n}"},))
                )
                outcomes.append("answered")
            except AuthError:
                outcomes.append("refused")

        threads = [threading.Thread(target=call, args=(n,)) for n in range(12)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(server.requests) <= 4, "only the attempts already in flight when the 401 came"
        assert outcomes.count("refused") >= 12 - 4 + 1
        assert model.limiter.refused is not None


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_refused_key_stops_the_run_with_at_most_the_calls_in_flight(pytester, workers: str) -> None:
    add_eval_module(pytester)
    with FakeProvider() as server:
        server.delay = 0.1
        server.script(*[status(401)] * 200)
        result = pytester.runpytest_subprocess(
            *run_args(pytester, server, "refused", bank(pytester, 60)), "--eval-concurrency", "8", "-n", workers
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
        args = run_args(pytester, server, "budget", cases, price_in=250_000.0)
        result = pytester.runpytest_subprocess(*args, "--eval-max-cost", "10", "--eval-concurrency", "8", "-n", workers)
        assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
        asked = len(server.requests)
        assert 4 <= asked <= 4 + 8 * max(1, int(workers)), asked  # $12 after 4 calls, plus at most N per process

        resumed = pytester.runpytest_subprocess(*args, "--eval-resume", "--eval-concurrency", "8", "-n", workers)
        assert resumed.ret == 0, resumed.stdout.str()
        summary = json.loads((pytester.path / "results-budget" / "fake_zeroshot" / "summary.json").read_text())
        assert summary["not_asked"]["count"] == 0 and summary["total_questions"] == 40
        assert len(bodies(server)) == len(set(bodies(server))) == 40 + 3, "every call was paid once over both runs"


def test_sigkill_with_calls_in_flight_then_resume_pays_no_answered_call_twice(pytester) -> None:
    add_eval_module(pytester)
    cases = bank(pytester, 30)
    with FakeProvider() as reference:
        reference.responder = answer_by_text
        whole = pytester.runpytest_subprocess(*run_args(pytester, reference, "whole", cases), "--eval-concurrency", "1")
        assert whole.ret == 0, whole.stdout.str()
        expected_bodies = bodies(reference)
    expected = json.loads((pytester.path / "results-whole" / "fake_zeroshot" / "summary.json").read_text())

    with FakeProvider() as server:
        server.responder = answer_by_text
        server.hold_after = 10  # ten calls answered (some of items not run yet), the rest hang
        args = run_args(pytester, server, "killed", cases)
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest", *args, "--eval-concurrency", "8"],
            cwd=pytester.path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while server.held == 0 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert server.held >= 1, "the run never reached a held request"
        time.sleep(1.0)  # the answered calls reach their cassettes
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        saved = list((pytester.path / "cassettes-killed").rglob("*.yaml"))
        assert len(saved) == 10, "every answered call was saved, its item run or not"

        server.hold_after = None
        resumed = pytester.runpytest_subprocess(*args, "--eval-resume", "--eval-concurrency", "8")
        assert resumed.ret == 0, resumed.stdout.str()
        assert bodies(server) == expected_bodies, "each request answered exactly once over both runs"
    assert json.loads((pytester.path / "results-killed" / "fake_zeroshot" / "summary.json").read_text()) == expected


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
            *run_args(pytester, server, "both", bank(pytester, 40, dialogues=0)),
            "--eval-max-items",
            "40",
            "--eval-concurrency",
            "8",
        )
        assert "dialectic summary" in result.stdout.str() and "eval summary" in result.stdout.str(), result.stdout.str()
        assert server.max_in_flight >= 4, server.max_in_flight


def test_calls_run_ahead_again_once_a_call_succeeds_after_failures(tmp_path) -> None:
    # A failing provider is asked one item at a time; the first success lets calls run ahead again.
    from pytest_reasoning_evals.cassettes import CassetteClient
    from pytest_reasoning_evals.prefetch import Prefetcher
    from pytest_reasoning_evals.providers.http import RetryPolicy

    spec = ModelSpec(alias="fake", provider="openai", model_id="fake-model")
    asked = [
        Request(item_id=f"q{n}", cassette_folder="s", messages=({"role": "user", "content": f"q{n}"},))
        for n in range(30)
    ]
    position = [0]
    with FakeProvider() as server:
        server.delay = 0.05
        server.script(*[status(503)] * (1 + 4))  # the first call and those run ahead all fail
        model = HttpModel(spec, RetryPolicy(max_retries=0), base_url=server.openai_base)
        model.allow_concurrency(4)
        prefetcher = Prefetcher(CassetteClient(model, tmp_path, "once"), 4, lambda: iter(asked[position[0] + 1 :]))
        try:
            for n in range(6):  # q0-q4 failed; q5 is asked alone, and answered
                position[0] = n
                completion = prefetcher.complete(asked[n])
            assert completion.error is None and server.pending_faults == 0
            server.max_in_flight = 0
            for n in range(7, 30):
                position[0] = n
                assert prefetcher.complete(asked[n]).error is None
        finally:
            prefetcher.close()
        assert server.max_in_flight >= 2, "calls run ahead again after the success"
