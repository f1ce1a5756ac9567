"""prefetch.py: calls run ahead again once a call succeeds after failures."""

from __future__ import annotations

import pytest
from fakeprovider import FakeProvider, status

from pytest_reasoning_evals.providers.base import Request
from pytest_reasoning_evals.providers.http import HttpModel, RetryPolicy
from pytest_reasoning_evals.registry import ModelSpec

KEY_VAR = "FAKE_PROVIDER_KEY"


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_VAR, "fake-key-for-tests")


def test_calls_run_ahead_again_once_a_call_succeeds_after_failures(tmp_path) -> None:
    # A failing provider is asked one item at a time; the first success lets calls run ahead again.
    from pytest_reasoning_evals.cassettes import CassetteClient
    from pytest_reasoning_evals.prefetch import Prefetcher

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
        prefetcher = Prefetcher(
            CassetteClient(model, tmp_path, "once"),
            4,
            lambda: iter(asked[position[0] + 1 :]),
            limiter=model.limiter,
            cut=model.cut,
        )
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
