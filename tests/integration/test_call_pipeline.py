"""One call pipeline for every model call of every protocol (issue 26 item 3): the dialectic's
responses, judges, resolution turns and follow-ups go through the same budget, run-ahead and
progress accounting as ChaosBench's questions. Real HTTP against the fake server on 127.0.0.1."""

from __future__ import annotations

import json
import re

import pytest
from fakeprovider import Usage
from helpers import DIALECTIC_MODULE, fake_model_args, fake_models, the_run

from integration.test_concurrency import requests_in
from integration.test_dialectic_run import STRUCTURED, Scripted, cases_file
from pytest_reasoning_evals.dialectic import judge
from pytest_reasoning_evals.providers.http import LATENCY_HEADER

# every test here runs whole sessions, each over a second
pytestmark = [pytest.mark.slow]

PRICE_PER_CALL = 0.041  # 41,000 prompt tokens at $1 per 1M
CASES = [f"c{n}" for n in range(8)]


@pytest.fixture
def server(server):
    server.responder = Scripted({case: STRUCTURED for case in CASES})
    server.usage = Usage(prompt=41_000, completion=0)
    return server


def dialectic_run(pytester, server, *args: str, tag: str = ""):
    """A recording dialectic run of `fake` (its own judge, 3 judges a response) over CASES, one
    variant; `tag`: into results[-tag] and cassettes[-tag]."""
    pytester.makepyfile(test_dialectic_items=DIALECTIC_MODULE)
    cases = cases_file(pytester.path / "cases.yaml", *((case, "dialectic") for case in CASES))
    return pytester.runpytest_subprocess(
        *fake_model_args(pytester, fake_models(server.openai_base, price_in=1.0), tag=tag),
        "--eval-dialectic-cases",
        str(cases),
        "--eval-variant",
        "dialectic",
        "--eval-out-dir",
        str(pytester.path / (f"results-{tag}" if tag else "results")),
        "--eval-record-mode",
        "once",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        *args,
    )


def run_meta(pytester) -> dict:
    return json.loads((the_run(pytester.path / "results", "fake", "dialectic") / "run_meta.json").read_text())


def progress_calls(stdout: str) -> tuple[int, float]:
    """(live calls, dollars spent) of the last progress line."""
    found = re.findall(
        r"eval progress: .*calls ([\d,]+) live / [\d,]+ cassette, .*\$([0-9.]+)(?: of \$[0-9.]+)? spent", stdout
    )
    assert found, stdout
    return int(found[-1][0].replace(",", "")), float(found[-1][1])


def kinds(server) -> dict[str, int]:
    """The requests the server received, by kind: generation (responses and follow-ups) or judge."""
    counts = {"generation": 0, "judge": 0}
    for request in server.requests:
        counts["judge" if request["body"]["messages"][0]["content"] == judge.SYSTEM else "generation"] += 1
    return counts


@pytest.mark.parametrize(
    ("workers", "concurrency"), [("0", "1"), ("2", "1"), ("0", "4")], ids=["n0", "n2", "n0-concurrency4"]
)
def test_max_cost_bounds_dialectic_and_judge_calls(pytester, server, workers: str, concurrency: str) -> None:
    budget = 0.5  # the 8 responses, then some judge calls
    result = dialectic_run(
        pytester, server, "--eval-max-cost", str(budget), "--eval-concurrency", concurrency, "-n", workers, "-rs"
    )
    live = len(server.requests) * PRICE_PER_CALL
    in_flight = max(1, int(workers)) * int(concurrency)
    # judges included: every request the server received counts, and they stop at the budget
    assert live <= budget + in_flight * PRICE_PER_CALL + 1e-9, (kinds(server), result.stdout.str())
    assert live >= budget and kinds(server)["judge"] > 0, kinds(server)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["*not asked: the --eval-max-cost budget of $0.5 is spent*"])
    meta = run_meta(pytester)
    assert meta["complete"] is False and "--eval-max-cost" in meta["incomplete_reason"], meta
    gates = json.loads((the_run(pytester.path / "results", "fake", "dialectic") / "gates.json").read_text())
    assert any(not g["passed"] and "--eval-max-cost" in g["detail"] for g in gates["gates"]), gates
    assert not list((pytester.path / "results").glob(".*")), "the budget's marker is gone"


def test_the_progress_line_counts_judge_and_resolution_calls(pytester, server) -> None:
    result = dialectic_run(pytester, server, "-n", "0")
    assert result.ret == 0, result.stdout.str()
    assert kinds(server)["judge"] > 0
    live, spent = progress_calls(result.stdout.str())
    assert live == len(server.requests), (live, kinds(server))
    assert spent == pytest.approx(len(server.requests) * PRICE_PER_CALL, abs=1e-4)


@pytest.mark.parametrize("workers", ["0", "1"])
def test_dialectic_responses_run_ahead_with_concurrency(pytester, server, workers: str) -> None:
    # One process (-n 0, or one xdist worker), so that the calls in flight are its run-ahead alone.
    # The server holds the first requests until 3 overlap (a fixed delay alone let a loaded
    # machine start the next call after the first had ended). Under xdist the worker must hold
    # the next cases' items for their responses to run ahead of this case's judges (it held one
    # case until its last 2 items: 2 calls in flight at most, by chance)
    server.overlap, server.delay = 3, 0.05
    result = dialectic_run(pytester, server, "--eval-concurrency", "4", "-n", workers)
    assert result.ret == 0, result.stdout.str()
    assert server.max_in_flight >= 3, server.max_in_flight
    # as a sequential run asks: per case its response, 3 judge calls and 1 resolution turn
    assert len(server.requests) == 5 * len(CASES), kinds(server)
    responses = [r for r in server.requests if r["body"]["messages"][-1]["content"].startswith("What should I do")]
    assert len(responses) == len(CASES), "one response per (case, variant)"


# what a dialectic run decides and records, apart from when it ran and how long it took
DECIDED = ("per_response.jsonl", "variant_summary.json", "multiturn_summary.json", "spotcheck_queue.jsonl")


def test_a_dialectic_run_decides_and_records_the_same_with_calls_in_flight_under_xdist(pytester, server) -> None:
    # the responses of later cases run ahead of earlier cases' judges: nothing of it may show
    server.extra_headers = {LATENCY_HEADER: "200"}  # a latency that does not depend on the run
    outputs = {}
    for concurrency, workers in (("1", "0"), ("4", "0"), ("4", "2")):
        tag = f"c{concurrency}-n{workers}"
        server.clear()
        result = dialectic_run(pytester, server, "--eval-concurrency", concurrency, "-n", workers, tag=tag)
        assert result.ret == 0, result.stdout.str()
        run = the_run(pytester.path / f"results-{tag}", "fake", "dialectic")
        outputs[tag] = {
            **{name: (run / name).read_text().splitlines() for name in DECIDED},
            "cassettes": requests_in(pytester.path / f"cassettes-{tag}"),
            "asked": sorted(json.dumps(r["body"], sort_keys=True) for r in server.requests),
            "outcomes": result.parseoutcomes(),
        }
    sequential = outputs.pop("c1-n0")
    assert len(sequential["asked"]) == 5 * len(CASES)
    for tag, concurrent in outputs.items():
        for name, value in concurrent.items():
            assert value == sequential[name], (tag, name)


def test_a_replay_of_a_budgeted_dialectic_run_asks_nothing_and_is_complete(pytester, server) -> None:
    assert dialectic_run(pytester, server).ret == 0
    asked = len(server.requests)
    result = dialectic_run(pytester, server, "--eval-max-cost", "0.01", "--eval-record-mode", "none")
    assert result.ret == 0, result.stdout.str()
    assert len(server.requests) == asked and run_meta(pytester)["complete"] is True
