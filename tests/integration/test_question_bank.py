"""The generated ChaosBench-Logic bank in a run: the oracle scores one on every family and split."""

from __future__ import annotations

import pytest
from helpers import add_eval_module, read_summary

from bankgen.bank import (
    CASES_DIR,
)
from pytest_reasoning_evals.chaosbench.questions import load_questions

# every test here runs whole sessions, each over a second
pytestmark = [pytest.mark.slow]

QUESTIONS = [q for q in load_questions(CASES_DIR) if q.dialogue_id is None]


# --- the oracle over the whole bank ---


def test_oracle_scores_one_on_every_family_and_split(pytester) -> None:
    add_eval_module(pytester)
    result = pytester.runpytest_subprocess("--model", "oracle", "-n", "2")
    assert result.ret == 0
    summary = read_summary(pytester, "oracle")
    assert summary["total_questions"] == len(QUESTIONS)
    assert set(summary["task_accuracy"].values()) == {1.0}
    assert set(summary["split_accuracy"].values()) == {1.0}
