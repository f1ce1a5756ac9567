"""--eval-stop-when-decided (issue 42): questions asked in a seeded stratified order, an always-valid
sequential test on the paired differences with the baseline after every block, and the run's
asking stopped once it is decided: the rest not asked, the run complete, the gate from the decision."""

from __future__ import annotations

import json

import pytest
from helpers import EVAL_MODULE, question, the_run, write_jsonl

QUESTIONS = 400


@pytest.fixture
def evals(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    bank = [
        question(f"q-{i:03d}", "TRUE" if i % 2 else "FALSE", family=("atomic", "multi_hop")[i % 3 == 0])
        for i in range(QUESTIONS)
    ]
    write_jsonl(pytester.path / "bank.jsonl", bank)
    assert pytester.runpytest("--model", "oracle", "--eval-cases", "bank.jsonl", "-p", "no:cacheprovider").ret == 0
    return pytester


def decided_run(evals: pytest.Pytester, model: str, *more: str) -> tuple[pytest.RunResult, dict]:
    baseline = the_run(evals.path / "results", "oracle")
    result = evals.runpytest(
        "--model",
        model,
        "--eval-cases",
        "bank.jsonl",
        "--eval-baseline",
        str(baseline),
        "--eval-stop-when-decided",
        "--eval-fail-on-regression",
        "-p",
        "no:cacheprovider",
        *more,
    )
    run = next(p for p in (evals.path / "results").iterdir() if p.name.startswith(f"{model}_"))
    return result, json.loads((run / "summary.json").read_text())


def test_always_false_against_an_oracle_baseline_is_decided_worse_before_the_last_question(evals) -> None:
    result, summary = decided_run(evals, "always-false")
    assert result.ret == 1
    decided = summary["decided_early"]
    assert decided["verdict"] == "worse" and decided["questions"] < QUESTIONS
    assert summary["total_questions"] + decided["not_asked"] == QUESTIONS and decided["not_asked"] > 0
    assert summary["complete"] is True and summary["incomplete_reason"] is None
    page = next((evals.path / "results").glob("always-false_*")) / "report.html"
    assert 'id="decided-early"' in page.read_text(encoding="utf-8")
    result.stdout.fnmatch_lines(
        [
            "DECIDED EARLY (--eval-stop-when-decided): after * questions the run is worse than the baseline *",
            "gate no-regression: FAILED *",
        ]
    )


def test_an_oracle_against_itself_is_never_decided_worse(evals) -> None:
    result, summary = decided_run(evals, "oracle")
    assert result.ret == 0, result.stdout.str()
    assert summary.get("decided_early") is None and summary["total_questions"] == QUESTIONS  # asked to the end


def test_with_a_tolerated_drop_an_oracle_against_itself_is_decided_not_worse_early(evals) -> None:
    result, summary = decided_run(evals, "oracle", "--eval-max-accuracy-drop", "0.05")
    assert result.ret == 0, result.stdout.str()
    assert summary["decided_early"]["verdict"] == "not worse" and summary["total_questions"] < QUESTIONS


def test_under_xdist_the_workers_stop_asking_once_the_controller_decides(evals) -> None:
    result, summary = decided_run(evals, "always-false", "-n", "2")
    assert result.ret == 1
    assert summary["decided_early"]["verdict"] == "worse" and summary["total_questions"] < QUESTIONS


def test_it_needs_a_baseline(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)
    result = pytester.runpytest("--model", "oracle", "--eval-stop-when-decided")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--eval-stop-when-decided needs --eval-baseline PATH*"])
