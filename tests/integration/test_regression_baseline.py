"""Baseline comparison and the regression gate in whole runs (SPEC 8): comparison.json, the
GitHub step summary, the options, and the exit status, for ChaosBench and the dialectic."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import DEFAULT_PROMPTS, add_eval_module, cases_run, fake_run_args, question, run_dir, write_jsonl
from scipy.stats import binomtest


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


def test_a_stale_replays_misses_are_counted_apart_not_as_broken_answers(pytester, server) -> None:
    """Issue 39: a prompt edited since the recording replays with misses only: the comparison with
    the recorded run pairs nothing and says the calls failed, never "accuracy 50% -> 0% REGRESSED"."""
    add_eval_module(pytester)
    bank = small_bank(pytester)
    server.responder = lambda body: "TRUE"
    args = fake_run_args(pytester, server.openai_base, bank)
    assert pytester.runpytest(*args, "--eval-min-coverage", "0").ret == 0
    recorded = cases_run(pytester.path / "results", "fake", bank)
    edited = pytester.path / "edited"
    edited.mkdir()
    for name in ("zeroshot.txt", "cot.txt"):
        (edited / name).write_text((DEFAULT_PROMPTS / name).read_text() + "\nThink first.\n")
    replay = [*args, "--eval-record-mode", "none", "--eval-prompts", str(edited), "--eval-out-dir", "replayed"]
    result = pytester.runpytest(*replay, f"--eval-baseline={recorded}", "--eval-min-coverage", "0")
    out = result.stdout.str()
    assert "REGRESSED" not in out and "-> 0.0%" not in out, out
    result.stdout.fnmatch_lines(
        [
            f"baseline {recorded}: 0 paired items, accuracy n/a -> n/a (n/a), fixed 0, broken 0, *",
            "  12 items left out: their calls failed in this run (cassette misses or provider errors), counted apart",
        ]
    )
    (replayed,) = (pytester.path / "replayed").glob("fake_zeroshot_*_edited-*")  # the edited prompt's own run
    c = json.loads((replayed / "comparison.json").read_text())
    assert (c["n_paired"], c["n_current_failed"], c["broken"]) == (0, 12, 0)


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


@pytest.mark.slow
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


@pytest.mark.slow
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
            # a response that missed is sent to no judge: its judge and resolution calls are not asked at all
            f"CASSETTE MISSES: 16 dialectic responses have no matching cassette *; "
            f"record them with: "
            f"pytest --basetemp=* --eval-variant-prompts={variants} --eval-variant dialectic --eval-record-mode=refresh"
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "gate dialectic-failed-calls: FAILED (16 of 16 responses (100.0%) failed (0 provider errors, 16 cassette misses), allowed 5%)"
        ]
    )
