"""Baseline comparison and the regression gate (SPEC 8): pairs, fixed/broken, the exact McNemar
p-value against an independent binomial test, comparison.json, and the exit status."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import add_eval_module, question, run_dir, write_jsonl
from scipy.stats import binomtest

from pytest_reasoning_evals.chaosbench.regression import compare, mcnemar_exact


@pytest.mark.parametrize(("broken", "fixed"), [(0, 0), (1, 0), (5, 1), (7, 7), (30, 12), (3, 40), (400, 350)])
def test_mcnemar_matches_an_independent_binomial_test(broken: int, fixed: int) -> None:
    n = broken + fixed
    expected = 1.0 if n == 0 else binomtest(min(broken, fixed), n, 0.5).pvalue
    assert mcnemar_exact(broken, fixed) == pytest.approx(expected, rel=1e-9)


def item(correct: bool, family: str = "atomic", split: str = "core", gold: bool = True) -> dict:
    return {"correct": correct, "gold": gold, "family": family, "split": split}


def record(id: str, status: str, family: str = "atomic", split: str = "core") -> dict:
    return {
        "id": id,
        "status": status,
        "correct": {"correct": True, "wrong": False}.get(status),
        "family": family,
        "split": split,
    }


def test_pairs_are_the_ids_with_gold_in_both_and_unknown_is_not_right() -> None:
    baseline = {
        "source": "b.json",
        "items": {
            "a": item(True),
            "b": item(True),
            "c": item(False, "multi_hop", "hard"),
            "d": item(True),
            "only-before": item(True),
            "nogold": item(False, gold=False),
        },
    }
    records = [
        record("a", "correct"),
        record("b", "unknown"),
        record("c", "correct", "multi_hop", "hard"),
        record("d", "wrong"),
        record("only-now", "correct"),
        record("nogold", "no_gold"),
    ]
    c = compare(baseline, records, alpha=0.05, max_drop=None)
    assert (c["n_paired"], c["fixed_ids"], c["broken_ids"]) == (4, ["c"], ["b", "d"])
    assert (c["n_current_only"], c["n_baseline_only"]) == (1, 1)
    assert (c["accuracy_baseline"], c["accuracy_current"], c["accuracy_delta"]) == (0.75, 0.5, -0.25)
    assert c["p_value"] == pytest.approx(binomtest(1, 3, 0.5).pvalue) and c["regressed"] is False
    multi_hop = c["family_deltas"]["multi_hop"]
    assert {k: v for k, v in multi_hop.items() if k != "accuracy_delta_ci95"} == {
        "n_paired": 1,
        "accuracy_baseline": 0.0,
        "accuracy_current": 1.0,
        "accuracy_delta": 1.0,
    }
    low, high = multi_hop["accuracy_delta_ci95"]  # one pair says little: the interval reaches below zero
    assert low < 0 < 1.0 == high
    assert compare(baseline, records, alpha=0.05, max_drop=0.2)["regressed"] is True, "a drop above max_drop"
    assert compare(baseline, records, alpha=0.05, max_drop=0.3)["regressed"] is False


def small_bank(pytester) -> str:
    records = [
        question(f"q-{i}", "TRUE" if i % 2 else "FALSE", family=("atomic", "multi_hop")[i % 2]) for i in range(12)
    ]
    return str(write_jsonl(pytester.path / "bank.jsonl", records))


def baseline_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", "baseline", *map(str, args)], capture_output=True, text=True
    )


def test_oracle_baseline_then_always_false_fails_the_regression_gate(pytester) -> None:
    add_eval_module(pytester)
    bank = small_bank(pytester)
    assert pytester.runpytest("--model", "oracle", f"--eval-cases={bank}").ret == 0
    committed = pytester.path / "snapshots" / "oracle.baseline.json"
    made = baseline_cli(run_dir(pytester, "oracle"), committed)
    assert made.returncode == 0 and "12 items (12 right) of oracle (zeroshot)" in made.stdout
    for baseline in (run_dir(pytester, "oracle"), committed):  # a run directory or the committed file
        result = pytester.runpytest(
            "--model",
            "always-false",
            f"--eval-cases={bank}",
            f"--eval-baseline={baseline}",
            "--eval-fail-on-regression",
        )
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        result.stdout.fnmatch_lines(
            [
                f"baseline {baseline}: 12 paired items, accuracy 100.0% -> 50.0% (-50.0%), "
                "fixed 0, broken 6, McNemar p = 0.03125: REGRESSED",
                "  broken: q-1, q-11, q-3, q-5, q-7, q-9",
                "gate no-regression: FAILED*",
            ]
        )
        c = json.loads((run_dir(pytester, "always-false") / "comparison.json").read_text())
        assert (c["broken"], c["fixed"], c["regressed"]) == (6, 0, True)
        assert c["p_value"] == pytest.approx(binomtest(0, 6, 0.5).pvalue)
        assert (
            c["baseline"]["config_hash"]
            == json.loads((run_dir(pytester, "oracle") / "run_meta.json").read_text())["config_hash"]
        )


def test_a_model_against_its_own_baseline_passes(pytester) -> None:
    add_eval_module(pytester)
    bank = small_bank(pytester)
    pytester.runpytest("--model", "random", f"--eval-cases={bank}")
    result = pytester.runpytest(
        "--model",
        "random",
        f"--eval-cases={bank}",
        f"--eval-baseline={run_dir(pytester, 'random')}",
        "--eval-fail-on-regression",
    )
    assert result.ret == 0, result.stdout.str()
    c = json.loads((run_dir(pytester, "random") / "comparison.json").read_text())
    assert (c["n_paired"], c["fixed"], c["broken"], c["p_value"], c["regressed"]) == (12, 0, 0, 1.0, False)


def test_regression_options_are_checked(pytester) -> None:
    add_eval_module(pytester)
    result = pytester.runpytest("--model", "oracle", "--eval-fail-on-regression")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--eval-fail-on-regression needs --eval-baseline PATH or --eval-dialectic-baseline PATH*"]
    )
    result = pytester.runpytest("--model", "oracle", "--eval-max-accuracy-drop", "0.1")
    result.stderr.fnmatch_lines(["*--eval-max-accuracy-drop needs --eval-baseline PATH*"])
    bad = pytester.path / "bad.json"
    bad.write_text('{"not": "a baseline"}')
    result = pytester.runpytest(
        "--model",
        "oracle",
        f"--eval-cases={small_bank(pytester)}",
        f"--eval-baseline={bad}",
        "--eval-fail-on-regression",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # read before any item is asked (issue 25)
    result.stderr.fnmatch_lines([f"ERROR: --eval-baseline {bad}: not a run directory or a baseline file*"])


def test_github_step_summary_gets_a_markdown_table(pytester, monkeypatch) -> None:
    add_eval_module(pytester)
    bank = small_bank(pytester)
    pytester.runpytest("--model", "oracle", f"--eval-cases={bank}")
    page = pytester.path / "step-summary.md"
    page.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(page))
    result = pytester.runpytest(
        "--model",
        "always-true",
        f"--eval-cases={bank}",
        f"--eval-baseline={run_dir(pytester, 'oracle')}",
        "--eval-fail-on-regression",
        "--eval-min-accuracy",
        "0.4",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = page.read_text()
    assert text.startswith("# earlier step\n### eval summary: always-true (zeroshot)\n"), "appended, not replaced"
    assert "| family | n | accuracy | 95% CI | Δ paired accuracy vs baseline |" in text
    assert (
        "| atomic | 6 | 0.0% | [0.0%, 39.0%] | -100.0% |" in text
        and "| multi_hop | 6 | 100.0% | [61.0%, 100.0%] | +0.0% |" in text
    )
    assert "fixed 0, broken 6, McNemar p = 0.03125: **regressed**" in text
    assert "| min-accuracy | ✅ passed | overall accuracy 0.5000, required >= 0.4 |" in text
    assert "| no-regression | ❌ FAILED |" in text


# --- dialectic: per variant, paired by case ---


def response(case: str, variant: str, score: float | None, hard_fail: bool = False) -> dict:
    return {"query_id": case, "variant": variant, "model": "m", "score": score, "hard_fail": hard_fail}


def test_dialectic_comparison_pairs_cases_per_variant_with_exact_tests() -> None:
    from pytest_reasoning_evals.dialectic.regression import compare as compare_dialectic

    cases = [f"c{i}" for i in range(8)]
    before = [response(c, "v", 80.0) for c in cases] + [response("c0", "w", 50.0)]
    now = [response(c, "v", 40.0 if i < 7 else 90.0, hard_fail=i < 6) for i, c in enumerate(cases)] + [
        response("c9", "w", 10.0)
    ]
    c = compare_dialectic(("before", before), now, alpha=0.05)
    v, w = c["variants"][0], c["variants"][1]
    assert (v["variant"], v["n_paired"], v["score_lower"], v["score_higher"]) == ("v", 8, 7, 1)
    assert v["mean_score_delta"] == pytest.approx((7 * 40 + 90) / 8 - 80)
    assert v["p_value_score"] == pytest.approx(binomtest(1, 8, 0.5).pvalue)
    assert (v["hard_fails_baseline"], v["hard_fails_current"], v["new_hard_fails"]) == (0, 6, cases[:6])
    assert v["p_value_hard_fails"] == pytest.approx(binomtest(0, 6, 0.5).pvalue)
    assert v["regressed"] is True and c["regressed"] is True
    assert (w["n_paired"], w["mean_score_delta"], w["regressed"]) == (0, None, False), "c9 has no pair"


def test_dialectic_replay_against_itself_passes_the_regression_gate(pytester) -> None:
    from helpers import DIALECTIC_MODULE, use_repo_cassettes

    pytester.makepyfile(test_dialectic=DIALECTIC_MODULE)
    use_repo_cassettes(pytester)
    assert pytester.runpytest_subprocess().ret == 0
    baseline = pytester.path / "results" / "smollm2-135m_dialectic"
    kept = pytester.path / "baseline-run"
    baseline.rename(kept)
    result = pytester.runpytest_subprocess(f"--eval-dialectic-baseline={kept}", "--eval-fail-on-regression")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*variant dialectic: 16 paired cases, mean score +0.0 (sign test p = 1), hard fails 0 -> 0 (p = 1)",
            "gate dialectic-no-regression: passed*",
        ]
    )
    c = json.loads((baseline / "comparison.json").read_text())
    assert [v["variant"] for v in c["variants"]] == ["baseline", "dialectic"] and c["regressed"] is False


def test_an_edited_variant_prompt_is_told_once_with_the_record_command(pytester) -> None:
    from helpers import DEFAULT_VARIANT_PROMPTS, DIALECTIC_MODULE, use_repo_cassettes

    pytester.makepyfile(test_dialectic=DIALECTIC_MODULE)
    use_repo_cassettes(pytester)
    variants = pytester.path / "prompts"
    variants.mkdir()
    (variants / "dialectic.txt").write_text((DEFAULT_VARIANT_PROMPTS / "dialectic.txt").read_text() + "\nBe brief.\n")
    result = pytester.runpytest_subprocess(f"--eval-variant-prompts={variants}", "--eval-variant", "dialectic")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert out.count("CASSETTE MISSES") == 1 and "Traceback" not in out
    result.stdout.fnmatch_lines(
        [
            f"CASSETTE MISSES: 16 dialectic responses, 48 judge calls and 112 resolution calls have no matching cassette *; "
            f"record them with: "
            f"pytest --basetemp=* --eval-variant-prompts={variants} --eval-variant dialectic --eval-record-mode=refresh"
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "gate dialectic-failed-calls: FAILED (16 of 16 responses (100.0%) failed (0 provider errors, 16 cassette misses), allowed 5%)"
        ]
    )
