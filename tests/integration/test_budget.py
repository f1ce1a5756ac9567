"""The cost budget over a whole run: --eval-max-cost stops asking, lists the rest, and a resume finishes."""

from __future__ import annotations

import json

import pytest
from fakeprovider import FakeProvider
from helpers import (
    add_eval_module,
    answer_by_text,
    bodies,
    eval_args,
    the_run,
)

# every test here runs whole sessions, each over a second
pytestmark = [pytest.mark.slow]


# --- a recording run killed with SIGKILL, then resumed ---


# --- the cost budget ---


@pytest.mark.parametrize("workers", ["0", "2"])
def test_max_cost_stops_asking_lists_the_rest_and_resume_finishes(pytester, fake_key, workers: str) -> None:
    add_eval_module(pytester)
    with FakeProvider() as server:  # 12 prompt tokens at $250,000 per 1M: $3 a call
        server.responder = answer_by_text
        args = eval_args(pytester, server.openai_base, "budget", price_in=250_000.0)[1:]
        result = pytester.runpytest_subprocess(
            *args, "--eval-max-cost", "10", "-n", workers, "-rs", "--eval-concurrency", "1"
        )
        assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()  # a partial run is not a pass
        result.stdout.fnmatch_lines(
            ["gate complete: FAILED (the run is incomplete: * items not asked (--eval-max-cost budget spent))"]
        )
        asked = len(server.requests)
        assert 4 <= asked <= 4 + int(workers), "stops once $10 is spent ($12 after 4 calls), plus calls in flight"
        # (with --eval-concurrency N, up to N calls per process: tests/integration/test_concurrency.py)
        summary = json.loads((the_run(pytester.path / "results-budget", "fake") / "summary.json").read_text())
        items = 12 + 2
        assert summary["not_asked"]["count"] > 0
        assert (
            summary["not_asked"]["count"] + summary["total_questions"] + summary["dialogue_details"]["total_dialogues"]
            == items
        )
        result.stdout.fnmatch_lines([f"NOT ASKED: {summary['not_asked']['count']} items*"])
        result.stdout.fnmatch_lines(["SKIPPED * not asked: the --eval-max-cost budget of $10 is spent"])

        resumed = pytester.runpytest_subprocess(*args, "--eval-resume", "-n", workers)
        assert resumed.ret == 0, resumed.stdout.str()
        final = json.loads((the_run(pytester.path / "results-budget", "fake") / "summary.json").read_text())
        assert final["not_asked"] == {"count": 0, "ids": []}
        assert final["total_questions"] == 12 and final["dialogue_details"]["total_dialogues"] == 2
        assert len(bodies(server)) == len(set(bodies(server))) == 12 + 2 * 3, "nothing paid twice"
        assert final["cost_usd"] == pytest.approx(3.0 * 18)
        assert final["task_details"]["atomic"]["cost_usd"] == pytest.approx(3.0 * 12)
        assert final["dialogue_details"]["cost_usd"] == pytest.approx(3.0 * 6)
