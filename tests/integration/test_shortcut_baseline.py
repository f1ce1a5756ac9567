"""The shortcut baseline (issue 28 item 8): `--model=shortcut` runs on the shipped bank like any
baseline, and another model's summary prints its accuracy as the floor once it has been run."""

from __future__ import annotations

import json

import pytest
from helpers import four_questions, read_summary, run_dir

from pytest_reasoning_evals.chaosbench.shortcut import decide
from pytest_reasoning_evals.registry import load_registry


def test_shortcut_is_a_shipped_baseline() -> None:
    spec = load_registry()["shortcut"]
    assert (spec.provider, spec.model_id, spec.api_key_env) == ("baseline", "shortcut", None)


def test_shortcut_runs_on_the_shipped_bank(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--model", "shortcut")
    assert result.ret == 0, result.stdout.str()
    summary = read_summary(evals, "shortcut")
    # it always answers, from the surface only, and the bank is built so that it gains nothing
    assert summary["coverage"] == 1.0
    assert 0.4 <= summary["overall_accuracy"] <= 0.6
    assert "shortcut floor" not in result.stdout.str()


def test_another_models_summary_prints_the_shortcut_floor(evals: pytest.Pytester) -> None:
    bank = four_questions(evals)
    before = evals.runpytest("--model", "always-true", f"--eval-cases={bank}")
    assert "shortcut floor" not in before.stdout.str()
    assert evals.runpytest("--model", "shortcut", f"--eval-cases={bank}").ret == 0
    floor = read_summary(evals, "shortcut")["overall_accuracy"]
    after = evals.runpytest("--model", "always-true", f"--eval-cases={bank}")
    after.stdout.fnmatch_lines([f"overall accuracy 50.0% *evaluated), shortcut floor: {floor:.1%}, coverage *"])
    # another mode has no shortcut run of its own yet
    cot = evals.runpytest("--model", "always-true", f"--eval-cases={bank}", "--eval-mode", "cot")
    assert "shortcut floor" not in cot.stdout.str()


def test_the_bank_questions_reach_the_shortcut_as_written(evals: pytest.Pytester) -> None:
    """What the run records is what the rules decide on the question text."""
    bank = four_questions(evals)
    assert evals.runpytest("--model", "shortcut", f"--eval-cases={bank}").ret == 0
    records = [json.loads(line) for line in (run_dir(evals, "shortcut") / "completions.jsonl").read_text().splitlines()]
    assert records and all(r["raw_text"] == decide(r["question"]).label for r in records)
