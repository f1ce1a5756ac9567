"""The plugin end to end through pytester: options, collection, outputs, exit codes, xdist."""

from __future__ import annotations

import csv
import gc
import json
import re
import weakref

import pytest
from helpers import (
    DEFAULT_CASES,
    REFERENCE,
    add_eval_module,
    question,
    read_summary,
    run_dir,
    use_repo_cassettes,
    write_jsonl,
)

from pytest_reasoning_evals import frozen
from pytest_reasoning_evals.chaosbench.questions import FAMILIES, SPLITS, group_dialogues, load_questions
from pytest_reasoning_evals.chaosbench.rows import compact
from pytest_reasoning_evals.frozen import Freezer
from pytest_reasoning_evals.lean_reports import make_lean
from pytest_reasoning_evals.session import EVAL_SESSION

LOADED = load_questions(DEFAULT_CASES)
BANK = [q for q in LOADED if q.dialogue_id is None]  # single questions; dialogues are one item each
BANK_SIZE = len(BANK)
DIALOGUES = group_dialogues(LOADED)


@pytest.fixture
def evals(pytester: pytest.Pytester) -> pytest.Pytester:
    add_eval_module(pytester)
    return pytester


def small_bank(pytester: pytest.Pytester) -> str:
    records = [
        question("q-true-1", "TRUE"),
        question("q-true-2", "TRUE", family="multi_hop", split="hard"),
        question("q-false-1", "FALSE"),
        question("q-false-2", "FALSE", family="adversarial", split="hard", bias="chaos_is_randomness"),
    ]
    return str(write_jsonl(pytester.path / "bank.jsonl", records))


# --- options and collection ---


def test_help_lists_the_eval_options(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    for option in (
        "--model",
        "--eval-mode",
        "--eval-cases",
        "--eval-split",
        "--eval-family",
        "--eval-max-items",
        "--eval-out-dir",
        "--eval-models-file",
        "--eval-strict-items",
        "--eval-min-accuracy",
        "--eval-num-shards",
        "--eval-shard-index",
        "--eval-resume",
        "--eval-max-cost",
        "--eval-dialectic-cases",
        "--eval-variant",
        "--eval-judge-model",
        "--eval-n-judges",
        "--eval-compare-models",
        "--eval-max-hard-fails",
        "--eval-require-variant-pass",
    ):
        result.stdout.fnmatch_lines([f"*{option}*"])


def test_one_namespaced_marker_per_protocol_is_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.chaosbench(family, split):*", "@pytest.mark.dialectic(case, variant):*"])
    assert not any(
        line.startswith(f"@pytest.mark.{name}:") for name in FAMILIES + SPLITS for line in result.stdout.lines
    )


def test_default_bank_collects_one_item_per_question_and_per_dialogue(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--collect-only", "-q")
    assert len(DIALOGUES) >= 50
    result.stdout.fnmatch_lines([f"{BANK_SIZE + len(DIALOGUES)} tests collected*"])
    result.stdout.fnmatch_lines([f"test_chaosbench.py::test_dialogue[{DIALOGUES[0].id}]"])
    assert result.ret == 0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-m", "chaosbench(family='atomic')"], [q for q in BANK if q.family == "atomic"]),
        (["-m", "chaosbench(split='hard')"], [q for q in BANK if q.split == "hard"]),
        (["-k", "atomic and core"], [q for q in BANK if q.family == "atomic" and q.split == "core"]),
        (
            ["-k", "lorenz63"],
            [q for q in BANK if "lorenz63" in q.system_id]
            + [d for d in DIALOGUES if "lorenz63" in d.turns[0].system_id],
        ),
        (
            ["--eval-family", "atomic", "--eval-family", "adversarial"],
            [q for q in BANK if q.family in ("atomic", "adversarial")],
        ),
        (["--eval-split", "robustness"], [q for q in BANK if q.split == "robustness"]),
        (["--eval-max-items", "7"], BANK[:7]),
        (["--eval-max-items", str(BANK_SIZE + 2)], BANK + DIALOGUES[:2]),
    ],
    ids=[
        "marker-family",
        "marker-split",
        "keyword",
        "keyword-system",
        "family-option",
        "split-option",
        "max-items",
        "max-items-dialogues",
    ],
)
def test_selection(evals: pytest.Pytester, args: list[str], expected: list) -> None:
    assert expected, "the bank must hold items for this selection"
    result = evals.runpytest("--collect-only", "-q", *args)
    items = ("::test_question[", "::test_dialogue[")
    collected = [line.split("[", 1)[1].rstrip("]") for line in result.stdout.lines if any(i in line for i in items)]
    assert collected == [q.id for q in expected]


def test_bad_record_stops_collection_with_file_and_line(evals: pytest.Pytester) -> None:
    bad = question("q-2")
    del bad["ground_truth"]
    bank = write_jsonl(evals.path / "bad.jsonl", [question("q-1"), bad])
    result = evals.runpytest("--eval-cases", str(bank))
    result.stdout.fnmatch_lines([f"*{bank}:2: missing field(s) ground_truth*"])
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert not (evals.path / "results").exists()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "invalid JSON"),
        # family and split are free names (a team's own), but names: non-empty strings
        (json.dumps(question("q-9", family="")), "field 'family' must be a non-empty string, got ''"),
        (json.dumps(question("q-9", split=["train"])), "field 'split' must be a non-empty string, got ['train']"),
        (json.dumps(question("q-9", truth="MAYBE")), "ground_truth must be TRUE or FALSE"),
        (json.dumps(question("q 9")), "id 'q 9' is not filesystem-safe"),
        (json.dumps(question("q-1")), "duplicate id 'q-1' (first at"),
    ],
    ids=["json", "family", "split", "gold", "id", "duplicate"],
)
def test_bad_record_messages(evals: pytest.Pytester, line: str, message: str) -> None:
    bank = evals.path / "bad.jsonl"
    bank.write_text(json.dumps(question("q-1")) + "\n\n" + line + "\n")
    result = evals.runpytest("--eval-cases", str(bank))
    assert f"{bank}:3: {message}" in result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_unknown_model_is_one_usage_error(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--model", "gpt5-turbo-max")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown model 'gpt5-turbo-max'; known models: *always-true*"])


def test_model_without_key_or_cassettes_is_one_usage_error(evals: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = evals.runpytest("--model", "gpt4", "--eval-cassette-dir", str(evals.path / "cassettes"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*OPENAI_API_KEY is not set and model 'gpt4' has no cassettes to replay under *cassettes/gpt4: "
            "set OPENAI_API_KEY and record them with `pytest evals --model=gpt4 --eval-record-mode=once`*"
        ]
    )
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()


def test_models_file_adds_an_alias(evals: pytest.Pytester) -> None:
    models = evals.path / "models.yaml"
    models.write_text("models:\n  my-oracle:\n    provider: baseline\n    model_id: oracle\n")
    result = evals.runpytest(
        "--eval-models-file", str(models), "--model", "my-oracle", "--eval-cases", small_bank(evals)
    )
    assert result.ret == 0
    assert read_summary(evals, "my-oracle")["overall_accuracy"] == 1.0


def test_malformed_models_file_names_file_and_alias(evals: pytest.Pytester) -> None:
    models = evals.path / "models.yaml"
    models.write_text("models:\n  broken:\n    provider: telepathy\n    model_id: x\n")
    result = evals.runpytest("--eval-models-file", str(models), "--model", "broken")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{models}: model 'broken': provider 'telepathy' is not one of*"])


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
    result = evals.runpytest("--model", "always-true", "--eval-cases", small_bank(evals), "-v")
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
    result = evals.runpytest("--model", "always-true", "--eval-cases", small_bank(evals), "--eval-strict-items")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["gate strict-items: FAILED (2 wrong and 0 UNKNOWN answers, allowed 0)"])


@pytest.mark.parametrize(("threshold", "exit_code"), [("0.5", 0), ("0.51", 1)])
def test_min_accuracy_gate(evals: pytest.Pytester, threshold: str, exit_code: int) -> None:
    result = evals.runpytest(
        "--model", "always-false", "--eval-cases", small_bank(evals), "--eval-min-accuracy", threshold
    )
    assert result.ret == exit_code
    verdict = "passed" if exit_code == 0 else "FAILED"
    result.stdout.fnmatch_lines([f"gate min-accuracy: {verdict} (overall accuracy 0.5000, required >= {threshold})"])


def test_min_accuracy_from_ini(evals: pytest.Pytester) -> None:
    use_repo_cassettes(evals, "eval_min_accuracy = 0.9\n")
    result = evals.runpytest("--model", "always-false", "--eval-cases", small_bank(evals))
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_min_accuracy_out_of_range_is_a_usage_error(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--eval-min-accuracy", "75")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--eval-min-accuracy must be between 0 and 1, got 75.0*"])


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


def test_without_v_a_wrong_answer_is_one_line_and_no_failure_section(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--model", "always-true", f"--eval-cases={small_bank(evals)}")
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
    result = evals.runpytest("--model", "always-true", "--eval-cases", small_bank(evals), "-v", "-rA")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*q-true-1*UNKNOWN*", "*1 failed, 2 passed*1 unknown*"])
    summary = read_summary(evals, "always-true")
    assert summary["num_unknown"] == 1
    assert summary["coverage"] == 0.75
    assert summary["total_evaluated"] == 3
    assert summary["overall_accuracy"] == pytest.approx(2 / 3)
    assert summary["tokens"] == {"input": 40, "output": 12, "thinking": 0}
    assert summary["cost_usd"] == pytest.approx(0.004)


def test_a_harness_error_fails_the_session(evals: pytest.Pytester) -> None:
    scripted_model(
        evals, {"q-true-1": "TRUE", "q-true-2": RuntimeError("boom"), "q-false-1": "FALSE", "q-false-2": "FALSE"}
    )
    result = evals.runpytest("--model", "always-true", "--eval-cases", small_bank(evals))
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
        "--model", "random", "--eval-mode", "cot", "--eval-cases", small_bank(evals), "--eval-out-dir", str(out)
    )
    assert result.ret == 0
    directory = out / "random_cot"
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
        "--model", "random", "--eval-mode", "cot", "--eval-cases", small_bank(evals), "--eval-out-dir", str(out)
    )
    assert (directory / "metrics_overview.csv").read_text() == overview, "rewritten per run, not appended"


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
    result = evals.runpytest("--model", "always-true", "--eval-cases", small_bank(evals))
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


def test_plain_test_sessions_write_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok():\n    assert True\n")
    result = pytester.runpytest()
    assert result.ret == 0
    assert not (pytester.path / "results").exists()
    assert "eval summary" not in result.stdout.str()


# --- xdist ---


def _summary_bytes(pytester: pytest.Pytester, model: str) -> str:
    return (run_dir(pytester, model) / "summary.json").read_text()


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


def test_xdist_exit_status_follows_the_gates(evals: pytest.Pytester) -> None:
    bank = small_bank(evals)
    assert evals.runpytest_subprocess("--model", "always-true", "--eval-cases", bank, "-n", "2").ret == 0
    gated = evals.runpytest_subprocess(
        "--model", "always-true", "--eval-cases", bank, "-n", "2", "--eval-min-accuracy", "0.6"
    )
    assert gated.ret == pytest.ExitCode.TESTS_FAILED


# --- upstream data (read from ../shared/reference, never copied) ---

UPSTREAM_V2 = REFERENCE / "chaosbench" / "upstream_v2_sample.jsonl"


@pytest.mark.skipif(not UPSTREAM_V2.exists(), reason="../shared/reference is not beside this checkout")
def test_upstream_v2_always_true_scores_exactly_half(evals: pytest.Pytester) -> None:
    result = evals.runpytest_subprocess("--model", "always-true", f"--eval-cases={UPSTREAM_V2}", "-n", "2")
    assert result.ret == 0
    summary = read_summary(evals, "always-true")
    assert summary["overall_accuracy"] == 0.5
    assert summary["total_questions"] == 200
    assert list(summary["task_accuracy"]) == list(FAMILIES)
    assert all(summary["task_accuracy"][family] is not None for family in FAMILIES)


# --- a good pytest citizen ---


def test_a_session_without_eval_items_touches_nothing(pytester: pytest.Pytester) -> None:
    """Installed but unused: no protocol, no registry, no model, no file; exit status untouched."""
    pytester.makepyfile(test_app="def test_ok():\n    assert True\n\ndef test_fails():\n    assert False\n")
    pytester.makeini("[pytest]\neval_models_file = does-not-exist.yaml\neval_cases = nowhere.jsonl\n")
    sessions = []
    result = pytester.runpytest(
        plugins=[
            type(
                "Spy",
                (),
                {"pytest_sessionfinish": lambda self, session: sessions.append(session.config.stash[EVAL_SESSION])},
            )()
        ]
    )
    result.assert_outcomes(passed=1, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    (session,) = sessions
    assert session.protocols == {} and "models" not in session.__dict__
    # pytest's own cache only
    assert sorted(p.name for p in pytester.path.iterdir()) == [
        ".pytest_cache",
        "test_app.py",
        "tox.ini",
    ]
    assert "eval summary" not in result.stdout.str()


FREEZE_PROBE = (
    "import gc, pathlib\n\ndef test_probe():\n    pathlib.Path('frozen.txt').write_text(str(gc.get_freeze_count()))\n"
)


def test_eval_items_are_kept_out_of_the_garbage_collectors_walk_until_the_session_ends(evals: pytest.Pytester) -> None:
    """session.py freezes what is alive after collecting eval items (a full collection would walk
    every item again and again), and hands it back when the session is over."""
    evals.makepyfile(test_probe=FREEZE_PROBE)
    assert gc.get_freeze_count() == 0
    result = evals.runpytest("--model", "always-true", "--eval-cases", small_bank(evals))
    assert result.ret == 0 and (evals.path / "results" / "always-true_zeroshot" / "summary.json").exists()
    assert int((evals.path / "frozen.txt").read_text()) > 1000  # the items, among everything else alive
    assert gc.get_freeze_count() == 0  # this process's pytest run (in-process) gave them back


def test_under_xdist_the_controller_freezes_from_its_first_result_and_thaws_at_the_end(evals: pytest.Pytester) -> None:
    seen = []
    spy = type("Spy", (), {"pytest_terminal_summary": lambda self: seen.append(gc.get_freeze_count())})()
    result = evals.runpytest("--model", "always-true", "--eval-cases", small_bank(evals), "-n", "2", plugins=[spy])
    assert result.ret == 0
    assert seen and seen[0] > 1000 and gc.get_freeze_count() == 0


def test_every_few_items_their_garbage_is_collected_and_what_they_keep_is_frozen(monkeypatch) -> None:
    monkeypatch.setattr(frozen, "FREEZE_EVERY", 3)
    thresholds = gc.get_threshold()
    freezer = Freezer()
    try:
        freezer.start()
        before = gc.get_freeze_count()
        assert gc.get_threshold() == (max(frozen.YOUNG_THRESHOLD, thresholds[0]), *thresholds[1:])

        class Node:
            pass

        kept, lost = Node(), Node()
        kept.cycle, lost.cycle = kept, lost  # only the cyclic collector frees a cycle
        gone = weakref.ref(lost)
        del lost
        for _ in range(3):
            freezer.tick()
        assert gone() is None  # collected before the freeze: garbage is never frozen
        assert gc.get_freeze_count() > before  # `kept` and the rest alive joined the frozen
    finally:
        freezer.thaw()
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == thresholds


PLAIN_TEST = "def test_plain():\n    pass\n"


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_pytest_keeps_no_silent_setup_or_teardown_report_of_an_eval_item(evals: pytest.Pytester, workers) -> None:
    """lean_reports.py: the terminal reporter keeps every report to the end; of an eval item, a
    passed setup or teardown that captured nothing is dropped once every hook has seen it. A
    plain test's are kept, and so is the call report of every item, with what it said."""
    evals.makepyfile(test_plain=PLAIN_TEST)
    seen, kept, outcomes = [], {}, set()
    spy = type(
        "Spy",
        (),
        {
            "pytest_runtest_logreport": lambda self, report: seen.append((report.nodeid, report.when)),
            "pytest_terminal_summary": lambda self, terminalreporter: (
                kept.update(
                    {
                        k: [(r.nodeid, r.when) for r in v if hasattr(r, "when")]
                        for k, v in terminalreporter.stats.items()
                    }
                ),
                outcomes.update(id(r.outcome) for r in terminalreporter.stats["passed"] if "chaosbench" in r.keywords),
            ),
        },
    )()
    result = evals.runpytest("--model", "always-true", "--eval-cases", small_bank(evals), *workers, plugins=[spy])
    assert result.ret == 0
    result.stdout.re_match_lines([r"=+ 3 passed, (1 deselected, )?2 wrong in "])  # the summary line counts every item
    eval_ids = {nodeid for nodeid, when in seen if "test_chaosbench" in nodeid}
    assert len(eval_ids) == 4 and {(i, w) for i in eval_ids for w in ("setup", "call", "teardown")} <= set(seen)
    assert sorted(kept[""]) == [("test_plain.py::test_plain", "setup"), ("test_plain.py::test_plain", "teardown")]
    assert sorted(i for i, w in kept["passed"] + kept["wrong"] if w == "call") == sorted(
        eval_ids | {"test_plain.py::test_plain"}
    )
    assert len(outcomes) == 1  # the kept eval reports share one "passed", also when each came from a worker


def test_the_items_pytest_keeps_share_their_questions_words_and_junit_properties(evals: pytest.Pytester) -> None:
    """pytest keeps every item (with its question and its user_properties) to the end of the
    run: the words a bank repeats and the (name, value) properties are one object each."""
    kept = []
    spy = type("Spy", (), {"pytest_sessionfinish": lambda self, session: kept.extend(session.items)})()
    result = evals.runpytest("--model", "always-true", "--eval-cases", small_bank(evals), plugins=[spy])
    assert result.ret == 0
    items = {item.callspec.id: item for item in kept}
    true_1, true_2, false_1, false_2 = (items[i] for i in ("q-true-1", "q-true-2", "q-false-1", "q-false-2"))
    first, second = (item.callspec.params["chaosbench_question"] for item in (true_1, true_2))
    assert first.ground_truth is second.ground_truth and first.template is second.template
    assert first.extra is second.extra == {}
    assert not hasattr(first, "__dict__")  # slots
    assert true_1.user_properties == [("eval_status", "correct"), ("eval_label", "TRUE"), ("eval_gold", "TRUE")]
    assert all(a is b for a, b in zip(true_1.user_properties, true_2.user_properties))
    assert all(a is b for a, b in zip(false_1.user_properties, false_2.user_properties))


def test_a_lean_call_report_shares_its_repeated_strings_and_says_the_same() -> None:
    """Under xdist each report arrives as new strings: the kept ones share them (interned)."""

    def arrived(i: int) -> pytest.TestReport:  # the same fields, each string a new object
        fresh = lambda text: "".join(list(text))  # noqa: E731
        return pytest.TestReport(
            fresh(f"test_x.py::test_q[q{i}]"),
            (fresh("test_x.py"), 3, fresh(f"test_q[q{i}]")),
            {fresh("chaosbench"): 1, fresh(f"q{i}"): 1},
            fresh("passed"),
            None,
            "call",
            worker_id=fresh("gw0"),
        )

    first, second = arrived(1), arrived(2)
    assert first.outcome is not second.outcome
    before = (first.nodeid, first.location, first.keywords, first.outcome, first.worker_id)
    make_lean(first, {}, from_worker=False)  # in one process the strings are shared already
    assert first.outcome is not second.outcome
    for report in (first, second):
        make_lean(report, {}, from_worker=True)
    assert (first.nodeid, first.location, first.keywords, first.outcome, first.worker_id) == before
    assert first.outcome is second.outcome and first.worker_id is second.worker_id
    assert first.location[0] is second.location[0]
    assert [k for k in first.keywords if k == "chaosbench"][0] is [k for k in second.keywords if k == "chaosbench"][0]


def test_the_records_the_controller_keeps_share_their_keys_and_repeated_words() -> None:
    """Under xdist each record arrives as new strings; the compact ones kept share them."""
    record = {
        "id": "q1",
        "family": "atomic",
        "split": "core",
        "status": "wrong",
        "raw_text": "TRUE",
        "error": None,
        "predicates": [{"name": "chaotic", "polarity": True}],
        "turns": [{"status": "correct", "family": "atomic", "question": "Is it?", "predicates": []}],
    }
    first, second = (compact(json.loads(json.dumps(record))) for _ in range(2))
    assert first == {k: v for k, v in record.items() if k not in ("raw_text", "turns", "predicates")} | {
        "predicates": ({"name": "chaotic", "polarity": True},),
        "turns": [{"status": "correct", "family": "atomic", "predicates": ()}],
    }
    assert first["family"] is second["family"] and first["turns"][0]["status"] is second["turns"][0]["status"]
    assert first["predicates"][0]["name"] is second["predicates"][0]["name"]
    assert first.get("kind", "question") == "question" and "bias" not in first and "turns" in first
    with pytest.raises(KeyError):
        first["raw_text"]  # noqa: B018 - not kept: completions.jsonl has it


def test_a_setup_report_is_dropped_only_when_it_is_silent_passed_and_just_kept() -> None:
    def setup(outcome="passed", sections=()) -> pytest.TestReport:
        return pytest.TestReport("t.py::t", ("t.py", 0, "t"), {}, outcome, None, "setup", sections=list(sections))

    silent, spoke, failed, earlier = (
        setup(),
        setup(sections=[("Captured stdout setup", "hi")]),
        setup("failed"),
        setup(),
    )
    for report in (silent, spoke, failed):
        stats = {"": [report]}
        make_lean(report, stats, from_worker=True)
        assert stats[""] == ([] if report is silent else [report])
    stats = {"": [earlier, silent]}
    make_lean(earlier, stats, from_worker=True)  # not the one the terminal reporter just added: left where it is
    assert stats[""] == [earlier, silent]


def test_a_process_with_the_collector_switched_off_is_left_as_it_is() -> None:
    thresholds, freezer = gc.get_threshold(), Freezer()
    gc.disable()
    try:
        freezer.start()
        for _ in range(frozen.FREEZE_EVERY):
            freezer.tick()
        assert (freezer.active, gc.get_freeze_count(), gc.get_threshold()) == (False, 0, thresholds)
    finally:
        freezer.thaw()
        gc.enable()


def test_a_session_without_eval_items_freezes_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_probe=FREEZE_PROBE)
    pytester.runpytest().assert_outcomes(passed=1)
    assert (pytester.path / "frozen.txt").read_text() == "0"


def test_settings_come_from_the_ini_file_relative_to_it(evals: pytest.Pytester) -> None:
    bank = small_bank(evals)
    use_repo_cassettes(
        evals,
        f"eval_model = oracle\neval_cases = {bank}\neval_out_dir = out\neval_min_accuracy = 0.5\n"
        "eval_family =\n    atomic\n    multi_hop\n",
    )
    result = evals.runpytest()
    assert result.ret == 0, result.stdout.str()
    summary = json.loads((evals.path / "out" / "oracle_zeroshot-subset" / "summary.json").read_text())
    assert summary["total_questions"] == 3 and summary["overall_accuracy"] == 1.0
    result.stdout.fnmatch_lines(["gate min-accuracy: passed*", "subset run (--eval-family)*untouched"])
    assert evals.runpytest("--model", "always-false").ret == 1, "the command line wins over the ini file"


def test_a_filtered_run_writes_beside_the_full_run(evals: pytest.Pytester) -> None:
    bank = small_bank(evals)
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
    result = evals.runpytest("--model", "always-true", f"--eval-cases={small_bank(evals)}", f"--junitxml={junit}")
    assert result.ret == 0
    text = junit.read_text()
    assert (
        '<property name="eval_status" value="wrong" />' in text
        and '<property name="eval_gold" value="FALSE" />' in text
    )
    assert "raw_text" not in text and "{" not in text, "no repr of the record"


def test_usage_problems_stop_the_session_once_under_xdist(evals: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = evals.runpytest_subprocess("--model", "gpt4", f"--eval-cassette-dir={evals.path / 'cassettes'}", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.str().count("OPENAI_API_KEY is not set") == 1
    assert "passed" not in result.stdout.str()


# --- nothing measured is not a pass ---


def test_a_gate_over_zero_items_fails_with_a_reason(evals: pytest.Pytester) -> None:
    bank = small_bank(evals)
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
            "gate max-fol-violation-rate: FAILED (FOL violation rate n/a (no dialogue turn carries predicates), allowed <= 0.1)"
        ]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    summary = read_summary(evals, "oracle", subset=True)
    assert (summary["complete"], summary["incomplete_reason"], summary["error_rate"]) == (True, None, 0.0)


def test_min_coverage_gate(evals: pytest.Pytester) -> None:
    scripted_model(evals, {"q-true-1": "It depends.", "q-true-2": "TRUE", "q-false-1": "FALSE", "q-false-2": "FALSE"})
    bank = small_bank(evals)
    assert evals.runpytest("--model", "always-true", f"--eval-cases={bank}", "--eval-min-coverage", "0.7").ret == 0
    result = evals.runpytest("--model", "always-true", f"--eval-cases={bank}", "--eval-min-coverage", "0.8")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["gate min-coverage: FAILED (coverage 0.7500 (answers with a TRUE/FALSE), required >= 0.8)"]
    )


def test_zero_selected_items_with_an_accuracy_gate_fail(evals: pytest.Pytester) -> None:
    args = [f"--eval-cases={small_bank(evals)}", "-k", "no-such-item"]
    result = evals.runpytest("--model", "oracle", "--eval-min-accuracy", "0.9", *args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["gate min-accuracy: FAILED (overall accuracy n/a (nothing evaluated), required >= 0.9)"]
    )
    under_xdist = evals.runpytest_subprocess("--model", "oracle", "--eval-min-accuracy", "0.9", *args, "-n", "2")
    assert under_xdist.ret != 0, "no item ran: never a pass"


def test_an_empty_case_file_is_a_collection_error_naming_it(evals: pytest.Pytester) -> None:
    empty = evals.path / "empty.jsonl"
    empty.write_text("")
    result = evals.runpytest("--model", "oracle", "--eval-min-accuracy", "0.9", f"--eval-cases={empty}")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert f"{empty}: no questions (the case file is empty)" in result.stdout.str()
