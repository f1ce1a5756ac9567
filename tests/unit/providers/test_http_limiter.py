"""providers/http.py's limiter of calls in flight (--eval-concurrency), against the fake provider
over real HTTP: halved on a 429, attempts wait for a slot, nothing sent after a refused key."""

from __future__ import annotations

import threading

import pytest
from fakeprovider import FakeProvider, status

from pytest_reasoning_evals.providers.base import Request
from pytest_reasoning_evals.providers.http import AuthError, HttpModel, Limiter, RetryPolicy
from pytest_reasoning_evals.registry import ModelSpec

KEY_VAR = "FAKE_PROVIDER_KEY"


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_VAR, "fake-key-for-tests")


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
