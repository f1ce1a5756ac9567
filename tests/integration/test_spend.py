"""The spend ledger (spend.py): what a run paid is counted once, by its live calls, and every
output says the same. Real HTTP against the fake provider on 127.0.0.1."""

from __future__ import annotations

import json

import pytest
from fakeprovider import FakeProvider
from helpers import fake_run_args, four_questions, the_run

from pytest_reasoning_evals.chaosbench.prompts import REPROMPT

CALL = 0.015  # 12 prompt tokens at $1,250 per 1M


def babble_then_false(body: dict) -> str:
    return "FALSE" if body["messages"][-1]["content"] == REPROMPT else "Let me think about it for a while."


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_replayed_call_beside_a_live_reprompt_is_not_counted_as_paid(
    recording_evals: pytest.Pytester, workers
) -> None:
    """Recorded before reprompts, then refreshed: each question's first call replays and only its
    reprompt is paid. run_meta.json's spent_usd, progress.json's and the progress line all say the
    four reprompts (run_meta.json and progress.json counted the replayed first calls too)."""
    bank = four_questions(recording_evals)
    with FakeProvider() as server:
        server.responder = babble_then_false
        args = fake_run_args(recording_evals, server.openai_base, bank, price_in=1250.0)
        assert recording_evals.runpytest_subprocess(*args, "--eval-reprompt", "0", "--eval-min-coverage", "0").ret == 0
        asked = len(server.requests)
        refresh = recording_evals.runpytest_subprocess(
            *args[:-4], "--eval-record-mode", "refresh", "-p", "no:cacheprovider", "-n", workers
        )
        assert refresh.ret == 0, refresh.stdout.str()
        assert len(server.requests) - asked == 4, "only the reprompts were asked"
    folder = the_run(recording_evals.path / "results", "fake")
    meta = json.loads((folder / "run_meta.json").read_text())
    progress = json.loads((folder / "checkpoints" / "progress.json").read_text())
    assert meta["spent_usd"] == progress["spent_usd"] == pytest.approx(4 * CALL)
    refresh.stdout.fnmatch_lines(
        [f"eval progress: 4/4 items *, calls 4 live / 4 cassette, 0 failed, ${4 * CALL:.4f} spent"]
    )
    # the run's call counts say the same: each question's first call replayed, its reprompt live
    refresh.stdout.fnmatch_lines(["*; calls 8: 4 cassette hits, 4 live"])
    # what the answers cost, replayed calls included, is summary.json's (unchanged)
    assert json.loads((folder / "summary.json").read_text())["cost_usd"] == pytest.approx(8 * CALL)
