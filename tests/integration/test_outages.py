"""Outages: a server failing every call, or no server at all, stops the run as an outage."""

from __future__ import annotations

import json
import time

import pytest
from fakeprovider import FakeProvider
from helpers import (
    add_eval_module,
    eval_args,
    the_run,
)

# every test here runs whole sessions, each over a second
pytestmark = [pytest.mark.slow]

KEY_VAR = "FAKE_PROVIDER_KEY"


# --- a recording run killed with SIGKILL, then resumed ---


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_VAR, "fake-key-for-tests")


# --- an outage stops the run, fast, and is not a pass ---


@pytest.mark.parametrize(("workers", "concurrency"), [("0", "1"), ("2", "1"), ("0", "4"), ("2", "4")])
def test_a_server_failing_every_call_stops_the_run_as_an_outage(pytester, key, workers: str, concurrency: str) -> None:
    from fakeprovider import status

    add_eval_module(pytester)
    with FakeProvider() as server:
        server.script(*[status(503, retry_after=0)] * 500)  # every call fails, retried at once
        result = pytester.runpytest_subprocess(
            *eval_args(pytester, server.openai_base, "outage")[1:], "-n", workers, "--eval-concurrency", concurrency
        )
        asked = len(server.requests)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*provider outage: 3 call(s) in a row failed after their retries (last: HTTP 503*"])
    # 5 attempts per item, 3 failed items per process plus the calls running ahead, and under
    # xdist one more item per other process
    processes, ahead = max(1, int(workers)), int(concurrency) if concurrency != "1" else 0
    assert asked <= 5 * (3 + ahead) * processes + 5 * (processes - 1), (
        f"stopped after 3 failed items per process, not 14: {asked}"
    )
    summary = json.loads((the_run(pytester.path / "results-outage", "fake") / "summary.json").read_text())
    assert summary["complete"] is False and "provider outage" in summary["incomplete_reason"]
    result.stdout.fnmatch_lines(["gate complete: FAILED (the run is incomplete: *provider outage*"])


def test_no_server_at_all_stops_within_one_retry_budget(pytester, key) -> None:
    add_eval_module(pytester)
    started = time.monotonic()
    result = pytester.runpytest_subprocess(*eval_args(pytester, "http://127.0.0.1:9/v1", "down")[1:])
    elapsed = time.monotonic() - started
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        ["*provider outage: 1 call(s) in a row failed after their retries (last: connection failed*"]
    )
    summary = json.loads((the_run(pytester.path / "results-down", "fake") / "summary.json").read_text())
    assert summary["complete"] is False and summary["num_errors"] == 1, "the first item only: the others were not asked"
    assert elapsed < 60, f"one retry budget (~8 s), not one per item: {elapsed:.0f} s"
