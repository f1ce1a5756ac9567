"""A ChaosBench run end to end through pytester: outcomes, output files, terminal summary, the
gates and exit status, xdist, and the upstream data."""

from __future__ import annotations

import csv
import json
import re

import pytest
from helpers import (
    DEFAULT_CASES,
    REFERENCE,
    four_questions,
    question,
    read_summary,
    run_dir,
    use_repo_cassettes,
    write_jsonl,
)

from pytest_reasoning_evals.chaosbench.questions import FAMILIES, group_dialogues, load_questions

LOADED = load_questions(DEFAULT_CASES)
BANK = [q for q in LOADED if q.dialogue_id is None]  # single questions; dialogues are one item each
BANK_SIZE = len(BANK)
DIALOGUES = group_dialogues(LOADED)


FAKE_MODEL_CONFTEST = """
import pytest
from pytest_reasoning_evals.providers.base import Completion

class Scripted:
    def complete(self, request):
        reply = REPLIES[request.item_id]
        if isinstance(reply, Exception):
            raise reply
        return Completion(provider="scripted", model="scripted", text=reply,
                          input_tokens=10, output_tokens=3, cost_usd=0.001)

@pytest.fixture(scope="session")
def chaosbench_model():
    return Scripted()
"""


def scripted_model(pytester: pytest.Pytester, replies: dict) -> None:
    """Override the `model` fixture with one that gives fixed replies per item id (no HTTP here)."""
    pytester.makeconftest(f"REPLIES = {replies!r}\n" + FAKE_MODEL_CONFTEST)


# --- xdist ---


def _summary_bytes(pytester: pytest.Pytester, model: str) -> str:
    return (run_dir(pytester, model) / "summary.json").read_text()


# --- upstream data (read from ../shared/reference, never copied) ---

UPSTREAM_V2 = REFERENCE / "chaosbench" / "upstream_v2_sample.jsonl"


# --- outcomes, outputs and exit status ---


def test_oracle_scores_everything_and_exits_zero(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--model", "oracle")
    assert result.ret == 0
    summary = read_summary(evals, "oracle")
    assert summary["overall_accuracy"] == 1.0
    assert summary["coverage"] == 1.0
    assert summary["total_questions"] == BANK_SIZE
    assert all(summary["task_accuracy"][q.family] == 1.0 for q in BANK)
    assert all(summary["split_accuracy"][q.split] == 1.0 for q in BANK)
    assert (summary["dialogue_accuracy"], summary["fol_violation_rate"], summary["contradiction_rate"]) == (
        1.0,
        0.0,
        0.0,
    )
    assert summary["dialogue_details"]["total_dialogues"] == len(DIALOGUES)
    result.stdout.fnmatch_lines([f"*{BANK_SIZE + len(DIALOGUES)} passed*"])


def test_wrong_answers_fail_items_with_one_line_reasons_but_not_the_session(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--model", "always-true", "--eval-cases", four_questions(evals), "-v")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*q-false-1*WRONG*", "*2 failed, 2 passed*"])
    result.stdout.fnmatch_lines(["*expected FALSE, got TRUE: 'TRUE'"])
    assert "Traceback" not in result.stdout.str()
    summary = read_summary(evals, "always-true")
    assert (summary["overall_accuracy"], summary["num_correct"], summary["total_evaluated"]) == (0.5, 2, 4)
    assert summary["bias_error_rate"] == 1.0
    assert summary["split_accuracy"] == {
        "core": 0.5,
        "robustness": None,
        "heldout_systems": None,
        "heldout_templates": None,
        "hard": 0.5,
    }


def test_strict_items_fails_the_session_on_a_wrong_answer(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--model", "always-true", "--eval-cases", four_questions(evals), "--eval-strict-items")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["gate strict-items: FAILED (2 wrong and 0 UNKNOWN answers, allowed 0)"])


@pytest.mark.parametrize(("threshold", "exit_code"), [("0.5", 0), ("0.51", 1)])
def test_min_accuracy_gate(evals: pytest.Pytester, threshold: str, exit_code: int) -> None:
    result = evals.runpytest(
        "--model", "always-false", "--eval-cases", four_questions(evals), "--eval-min-accuracy", threshold
    )
    assert result.ret == exit_code
    verdict = "passed" if exit_code == 0 else "FAILED"
    result.stdout.fnmatch_lines([f"gate min-accuracy: {verdict} (overall accuracy 0.5000, required >= {threshold})"])


def test_min_accuracy_from_ini(evals: pytest.Pytester) -> None:
    use_repo_cassettes(evals, "eval_min_accuracy = 0.9\n")
    result = evals.runpytest("--model", "always-false", "--eval-cases", four_questions(evals))
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_min_accuracy_out_of_range_is_a_usage_error(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--eval-min-accuracy", "75")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--eval-min-accuracy must be between 0 and 1, got 75.0*"])


def test_without_v_a_wrong_answer_is_one_line_and_no_failure_section(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--model", "always-true", f"--eval-cases={four_questions(evals)}")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*wrong answers, UNKNOWNs and unmet checks: 2 (one line each)*",
            "test_chaosbench.py::test_question[[]q-false-1] - expected FALSE, got TRUE: 'TRUE'",
            "test_chaosbench.py::test_question[[]q-false-2] - expected FALSE, got TRUE: 'TRUE'",
            "*eval summary: always-true (zeroshot)*",
            "*2 passed*2 wrong in*",
        ]
    )
    assert "FAILURES" not in result.stdout.str()


def test_unknown_answers_are_reported_as_unknown_and_lower_coverage(evals: pytest.Pytester) -> None:
    scripted_model(
        evals,
        {
            "q-true-1": "It depends on the parameters.",
            "q-true-2": "**TRUE**",
            "q-false-1": "Final answer: FALSE",
            "q-false-2": "yes",
        },
    )
    # asked once (no reprompt), under the default coverage floor of 0.8
    result = evals.runpytest(
        "--model",
        "always-true",
        "--eval-cases",
        four_questions(evals),
        "-v",
        "-rA",
        "--eval-reprompt",
        "0",
        "--eval-min-coverage",
        "0.75",
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*q-true-1*UNKNOWN*", "*1 failed, 2 passed*1 unknown*"])
    summary = read_summary(evals, "always-true")
    assert summary["num_unknown"] == 1
    assert summary["coverage"] == 0.75
    assert summary["total_evaluated"] == 3
    assert summary["overall_accuracy"] == pytest.approx(2 / 3)
    assert summary["tokens"] == {"input": 40, "output": 12, "thinking": 0}
    assert summary["cost_usd"] == pytest.approx(0.004)


def test_a_model_of_ones_own_without_conversation_is_reprompted_call_by_call(evals: pytest.Pytester) -> None:
    """A conftest's chaosbench_model need not have conversation(): the reprompt is its next call."""
    scripted_model(evals, {"q-true-1": "It depends.", "q-true-2": "TRUE", "q-false-1": "FALSE", "q-false-2": "FALSE"})
    result = evals.runpytest(
        "--model", "always-true", "--eval-cases", four_questions(evals), "--eval-min-coverage", "0"
    )
    assert result.ret == 0, result.stdout.str()
    summary = read_summary(evals, "always-true")
    assert (summary["reprompted"], summary["rescued_by_reprompt"], summary["num_unknown"]) == (1, 0, 1)
    assert summary["tokens"] == {"input": 50, "output": 15, "thinking": 0}, "the reprompt's usage counts"


def test_a_harness_error_fails_the_session(evals: pytest.Pytester) -> None:
    scripted_model(
        evals, {"q-true-1": "TRUE", "q-true-2": RuntimeError("boom"), "q-false-1": "FALSE", "q-false-2": "FALSE"}
    )
    result = evals.runpytest("--model", "always-true", "--eval-cases", four_questions(evals))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # the item that raised is an error record, and the run is not complete (issue 25)
    summary = read_summary(evals, "always-true")
    assert (summary["total_questions"], summary["num_errors"], summary["complete"]) == (4, 1, False)
    assert summary["incomplete_reason"].startswith("1 item ended in a harness error")


def test_no_gold_items_are_counted_apart(evals: pytest.Pytester) -> None:
    bank = write_jsonl(evals.path / "bank.jsonl", [question("q-1"), question("q-2", truth=None)])
    result = evals.runpytest("--model", "always-true", "--eval-cases", str(bank))
    assert result.ret == 0
    summary = read_summary(evals, "always-true")
    assert (summary["num_items_no_gold"], summary["total_evaluated"], summary["overall_accuracy"]) == (1, 1, 1.0)


def test_run_writes_every_output_file(evals: pytest.Pytester) -> None:
    out = evals.path / "elsewhere"
    result = evals.runpytest(
        "--model", "random", "--eval-mode", "cot", "--eval-cases", four_questions(evals), "--eval-out-dir", str(out)
    )
    assert result.ret == 0
    # case files other than the shipped bank: their name and hash in the folder's
    (directory,) = out.glob("random_cot_bank-*")
    result.stdout.fnmatch_lines([f"results: {directory}"])
    summary = json.loads((directory / "summary.json").read_text())
    for key in (
        "overall_accuracy",
        "coverage",
        "total_evaluated",
        "total_questions",
        "num_unknown",
        "split_accuracy",
        "task_accuracy",
        "fol_violation_rate",
        "contradiction_rate",
        "dialogue_accuracy",
    ):
        assert key in summary
    assert summary["dialogue_accuracy"] is None and summary["fol_violation_rate"] is None
    meta = json.loads((directory / "run_meta.json").read_text())
    assert set(meta) >= {
        "model",
        "mode",
        "timestamp",
        "num_workers",
        "total_questions",
        "num_items_no_gold",
        "dataset_version",
        "config_hash",
        "execution_time_seconds",
        "api_success_rate",
    }
    assert meta["calls"] == {"total": 4, "cassette_hits": 0, "live": 0}  # a baseline: no HTTP, no cassette
    assert (meta["model"], meta["mode"], meta["num_workers"], meta["total_questions"]) == ("random", "cot", 1, 4)
    manifest = json.loads((directory / "run_manifest.json").read_text())
    assert set(manifest) >= {
        "run_id",
        "model_config",
        "dataset_config",
        "environment",
        "execution",
        "harness",
        "project",
    }
    assert manifest["harness"]["version"] == "0.1.0"
    assert re.fullmatch(r"[0-9a-f]{40}", manifest["harness"]["git_revision"]), "this checkout's commit"
    assert manifest["project"] == {"rootdir": str(evals.path), "git_revision": None}, (
        "the project is not a git work tree"
    )
    assert manifest["dataset_config"]["manifest_hash"] and manifest["prompt"]["sha256"]
    assert manifest["prompt"]["path"].endswith("cot.txt")
    completions = [json.loads(line) for line in (directory / "completions.jsonl").read_text().splitlines()]
    assert [c["id"] for c in completions] == sorted(["q-true-1", "q-true-2", "q-false-1", "q-false-2"])
    assert {
        "id",
        "prompt_sha256",
        "raw_text",
        "label",
        "gold",
        "correct",
        "input_tokens",
        "output_tokens",
        "latency_ms",
        "cost_usd",
        "cassette",
    } <= set(completions[0])
    with (directory / "accuracy_by_task.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["task"] for r in rows] == list(FAMILIES)
    overview = (directory / "metrics_overview.csv").read_text()
    evals.runpytest(
        "--model", "random", "--eval-mode", "cot", "--eval-cases", four_questions(evals), "--eval-out-dir", str(out)
    )
    assert (directory / "metrics_overview.csv").read_text() == overview, "rewritten per run, not appended"


@pytest.mark.slow
def test_random_baseline_is_seeded(evals: pytest.Pytester) -> None:
    evals.runpytest("--model", "random", "--eval-seed", "7")
    first = (run_dir(evals, "random") / "completions.jsonl").read_text()
    evals.runpytest("--model", "random", "--eval-seed", "7")
    assert (run_dir(evals, "random") / "completions.jsonl").read_text() == first
    records = [json.loads(line) for line in first.splitlines()]
    labels = [r["label"] for r in records if "turns" not in r]
    assert {"TRUE", "FALSE"} == set(labels)
    # dialogue turns are drawn apart: not one draw repeated over a whole dialogue
    turn_labels = [{t["label"] for t in r["turns"]} for r in records if "turns" in r]
    assert any(len(labels) == 2 for labels in turn_labels)


def test_terminal_summary(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--model", "always-true", "--eval-cases", four_questions(evals))
    result.stdout.fnmatch_lines(
        [
            "*eval summary: always-true (zeroshot)*",
            "overall accuracy 50.0% * (2/4 evaluated), coverage 100.0%, UNKNOWN 0, no gold 0",
            "  family * n *acc*",
            "  atomic * 2 * 50.0%*",
            "  adversarial * 1 *  0.0%*",
            "  split * n *acc*",
            "  hard * 2 * 50.0%*",
            f"results: {run_dir(evals, 'always-true')}",
        ]
    )


@pytest.mark.slow
@pytest.mark.parametrize("model", ["oracle", "random"])
def test_xdist_and_serial_runs_write_identical_summaries(evals: pytest.Pytester, model: str) -> None:
    serial = evals.runpytest_subprocess("--model", model, "-n", "0")
    assert serial.ret == 0
    serial_summary = _summary_bytes(evals, model)
    parallel = evals.runpytest_subprocess("--model", model, "-n", "2")
    assert parallel.ret == 0
    assert _summary_bytes(evals, model) == serial_summary
    meta = json.loads((run_dir(evals, model) / "run_meta.json").read_text())
    assert meta["num_workers"] == 2


@pytest.mark.slow
def test_xdist_exit_status_follows_the_gates(evals: pytest.Pytester) -> None:
    bank = four_questions(evals)
    assert evals.runpytest_subprocess("--model", "always-true", "--eval-cases", bank, "-n", "2").ret == 0
    gated = evals.runpytest_subprocess(
        "--model", "always-true", "--eval-cases", bank, "-n", "2", "--eval-min-accuracy", "0.6"
    )
    assert gated.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.slow
@pytest.mark.skipif(not UPSTREAM_V2.exists(), reason="../shared/reference is not beside this checkout")
def test_upstream_v2_always_true_scores_exactly_half(evals: pytest.Pytester) -> None:
    result = evals.runpytest_subprocess("--model", "always-true", f"--eval-cases={UPSTREAM_V2}", "-n", "2")
    assert result.ret == 0
    summary = read_summary(evals, "always-true")
    assert summary["overall_accuracy"] == 0.5
    assert summary["total_questions"] == 200
    assert list(summary["task_accuracy"]) == list(FAMILIES)
    assert all(summary["task_accuracy"][family] is not None for family in FAMILIES)


def test_a_filtered_run_writes_beside_the_full_run(evals: pytest.Pytester) -> None:
    bank = four_questions(evals)
    evals.runpytest("--model", "oracle", f"--eval-cases={bank}")
    full = (run_dir(evals, "oracle") / "summary.json").read_text()
    for args in (
        ["-k", "q-true-1"],
        ["-m", "chaosbench(family='atomic')"],
        ["--eval-max-items", "1"],
        ["test_chaosbench.py::test_question[q-false-1]"],
    ):
        result = evals.runpytest("--model", "oracle", f"--eval-cases={bank}", *args)
        assert result.ret == 0
        result.stdout.fnmatch_lines([f"results: {run_dir(evals, 'oracle', subset=True)}", "subset run (*"])
        assert (run_dir(evals, "oracle") / "summary.json").read_text() == full, args
    assert read_summary(evals, "oracle", subset=True)["total_questions"] == 1


def test_junitxml_gets_a_few_scalar_properties_not_the_record(evals: pytest.Pytester) -> None:
    junit = evals.path / "junit.xml"
    result = evals.runpytest("--model", "always-true", f"--eval-cases={four_questions(evals)}", f"--junitxml={junit}")
    assert result.ret == 0
    text = junit.read_text()
    assert (
        '<property name="eval_status" value="wrong" />' in text
        and '<property name="eval_gold" value="FALSE" />' in text
    )
    assert "raw_text" not in text and "{" not in text, "no repr of the record"


# --- nothing measured is not a pass ---


def test_a_gate_over_zero_items_fails_with_a_reason(evals: pytest.Pytester) -> None:
    bank = four_questions(evals)
    # ChaosBench items run, but the dialectic gate asked for has nothing to judge
    result = evals.runpytest("--model", "oracle", f"--eval-cases={bank}", "--eval-max-hard-fails", "0")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["gate dialectic: FAILED (nothing evaluated: no dialectic response was judged)"])
    # the ChaosBench gates over a selection with no ChaosBench item beside an eval that ran
    result = evals.runpytest(
        "--model",
        "oracle",
        f"--eval-cases={bank}",
        "-k",
        "q-true-1",
        "--eval-strict-items",
        "--eval-max-fol-violation-rate",
        "0.1",
    )
    result.stdout.fnmatch_lines(
        [
            "gate max-fol-violation-rate: FAILED (FOL violation rate n/a (no dialogue turn names a ChaosBench predicate), allowed <= 0.1)"
        ]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    summary = read_summary(evals, "oracle", subset=True)
    assert (summary["complete"], summary["incomplete_reason"], summary["error_rate"]) == (True, None, 0.0)


def test_min_coverage_gate(evals: pytest.Pytester) -> None:
    scripted_model(evals, {"q-true-1": "It depends.", "q-true-2": "TRUE", "q-false-1": "FALSE", "q-false-2": "FALSE"})
    bank = four_questions(evals)
    assert evals.runpytest("--model", "always-true", f"--eval-cases={bank}", "--eval-min-coverage", "0.7").ret == 0
    result = evals.runpytest("--model", "always-true", f"--eval-cases={bank}", "--eval-min-coverage", "0.8")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["gate min-coverage: FAILED (coverage 0.7500 (answers with a TRUE/FALSE), required >= 0.8)"]
    )


@pytest.mark.slow
def test_zero_selected_items_with_an_accuracy_gate_fail(evals: pytest.Pytester) -> None:
    args = [f"--eval-cases={four_questions(evals)}", "-k", "no-such-item"]
    result = evals.runpytest("--model", "oracle", "--eval-min-accuracy", "0.9", *args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["gate min-accuracy: FAILED (overall accuracy n/a (nothing evaluated), required >= 0.9)"]
    )
    under_xdist = evals.runpytest_subprocess("--model", "oracle", "--eval-min-accuracy", "0.9", *args, "-n", "2")
    assert under_xdist.ret != 0, "no item ran: never a pass"
