"""Outages: a server failing every call, or no server at all, stops the run as an outage."""

from __future__ import annotations

import json
import socket

import pytest
from fakeprovider import FakeProvider
from helpers import (
    add_eval_module,
    eval_args,
    small_bank,
    the_run,
)

# every test here runs whole sessions, each over a second
pytestmark = [pytest.mark.slow]


# --- a recording run killed with SIGKILL, then resumed ---


# --- an outage stops the run, fast, and is not a pass ---


@pytest.mark.parametrize(("workers", "concurrency"), [("0", "1"), ("2", "1"), ("0", "4"), ("2", "4")])
def test_a_server_failing_every_call_stops_the_run_as_an_outage(
    pytester, fake_key, workers: str, concurrency: str
) -> None:
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


def test_no_server_at_all_stops_at_the_first_call_naming_the_url(pytester, fake_key) -> None:
    add_eval_module(pytester)
    result = pytester.runpytest_subprocess(*eval_args(pytester, "http://127.0.0.1:9/v1", "down")[1:])
    assert result.ret == 1, "nothing measured is not a pass"
    result.stdout.fnmatch_lines(["*no server: nothing is listening at http://127.0.0.1:9/v1 for model 'fake'*"])
    result.stdout.no_fnmatch_line("*provider outage*")
    summary = json.loads((the_run(pytester.path / "results-down", "fake") / "summary.json").read_text())
    assert summary["complete"] is False and summary["num_errors"] == 1, "the first item only: the others were not asked"
    assert "nothing is listening" in summary["incomplete_reason"]
    result.stdout.no_fnmatch_line("*attempt*")  # not retried: a retried call says after how many attempts


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_local_model_without_its_server_says_once_how_to_start_it(pytester, workers: str) -> None:
    """A fresh project on the local model with no server running: one line naming the URL, that
    nothing is listening (not an outage), and the command that starts the server; no retries."""
    with socket.socket() as sock:  # a port on 127.0.0.1 that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    add_eval_module(pytester)
    url = f"http://127.0.0.1:{port}/v1"
    bank = small_bank(pytester.path / "bank.jsonl")
    result = pytester.runpytest_subprocess(
        *("test_chaosbench.py", "--model", "smollm2-135m", "--eval-base-url", url, "--eval-cases", str(bank)),
        *("--eval-cassette-dir", str(pytester.path / "cassettes"), "-p", "no:cacheprovider", "-n", workers),
    )
    assert result.ret == 1, "nothing measured is not a pass"
    out = result.stdout.str()
    hint = f"nothing is listening at {url} for model 'smollm2-135m' (start it with: reasoning-evals serve-local --port {port})"
    stops = [line for line in out.splitlines() if "Interrupted" in line]
    assert len(stops) == 1 and f"no server: {hint}" in stops[0], out
    assert "provider outage" not in out and "attempts" not in out and "Traceback" not in out
