"""Shards and their merge: shards merged equal the unsharded run, merge refuses shards that do
not make one run, the gates apply to the merged summary, and the example workflow's options exist."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import yaml
from fakeprovider import FakeProvider
from helpers import PROJECT_ROOT, add_eval_module, answer_by_text, fake_run_args, run_dir, small_bank


def completions(directory) -> list[dict]:
    return [json.loads(line) for line in (directory / "completions.jsonl").read_text().splitlines()]


def merge_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", "merge", *map(str, args)], capture_output=True, text=True
    )


@pytest.mark.slow
def test_three_shards_merged_equal_the_unsharded_run(pytester) -> None:
    add_eval_module(pytester)
    shard_dirs = []
    for index in range(3):
        result = pytester.runpytest("--model", "random", "--eval-num-shards", "3", "--eval-shard-index", str(index))
        assert result.ret == 0, result.stdout.str()
        result.stdout.fnmatch_lines([f"*eval summary: random (zeroshot), shard {index} of 3*"])
        shard_dirs.append(pytester.path / "results" / f"random_zeroshot_shard{index}of3")
    shard_ids = [{r["id"] for r in completions(d)} for d in shard_dirs]
    assert all(shard_ids) and not (
        shard_ids[0] & shard_ids[1] or shard_ids[1] & shard_ids[2] or shard_ids[0] & shard_ids[2]
    )

    assert pytester.runpytest("--model", "random", "-n", "2").ret == 0
    unsharded = run_dir(pytester, "random")
    expected_summary = (unsharded / "summary.json").read_text()
    merged = pytester.path / "merged"
    result = merge_cli(*shard_dirs, "--out", merged)
    assert result.returncode == 0, result.stderr
    assert "merge: 3 shards" in result.stdout and f"results: {merged}" in result.stdout
    assert (merged / "summary.json").read_text() == expected_summary
    assert (merged / "completions.jsonl").read_text() == (unsharded / "completions.jsonl").read_text()
    assert (merged / "accuracy_by_task.csv").read_text() == (unsharded / "accuracy_by_task.csv").read_text()
    meta = json.loads((merged / "run_meta.json").read_text())
    assert meta["config_hash"] == json.loads((unsharded / "run_meta.json").read_text())["config_hash"]
    execution = json.loads((merged / "run_manifest.json").read_text())["execution"]
    assert execution["merged"] and execution["num_shards"] == 3 and len(execution["shards"]) == 3
    # the merged directory gets its page and its gates, from the merged files
    assert f"report: {merged / 'report.html'}" in result.stdout
    page = (merged / "report.html").read_text()
    assert "merged from shards" in page
    assert page.count('"kind":"question"') + page.count('"kind":"dialogue"') == len(completions(merged))
    # the one gate no option asked for: the default coverage floor
    gates = json.loads((merged / "gates.json").read_text())
    assert gates["passed"] and [(g["name"], g["passed"]) for g in gates["gates"]] == [("min-coverage", True)]


@pytest.mark.slow
def test_merge_refuses_shards_that_do_not_make_one_run(pytester) -> None:
    add_eval_module(pytester)
    for index in range(2):
        pytester.runpytest("--model", "random", "--eval-num-shards", "2", "--eval-shard-index", str(index))
    pytester.runpytest(
        "--model",
        "random",
        "--eval-num-shards",
        "2",
        "--eval-shard-index",
        "1",
        "--eval-seed",
        "9",
        "--eval-out-dir",
        "other",
    )
    pytester.runpytest("--model", "random", "--eval-max-items", "3")
    results = pytester.path / "results"
    shard0, shard1 = results / "random_zeroshot_shard0of2", results / "random_zeroshot_shard1of2"
    cases = [
        ([shard0], "shard(s) 1 of 2 missing"),
        ([shard0, shard1, shard1], "shard(s) 1 given twice"),
        ([shard0, pytester.path / "other" / "random_zeroshot_shard1of2"], "different configurations"),
        ([results / "random_zeroshot-subset"], "not a shard"),
        ([pytester.path / "nowhere"], "no run_manifest.json"),
    ]
    for dirs, message in cases:
        result = merge_cli(*dirs)
        assert result.returncode == 2 and message in result.stderr, (dirs, result.stderr)


def test_shard_options_are_checked(pytester) -> None:
    add_eval_module(pytester)
    result = pytester.runpytest("--model", "oracle", "--eval-num-shards", "3", "--eval-shard-index", "3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--eval-shard-index must be in 0..2 for --eval-num-shards 3, got 3*"])
    result = pytester.runpytest("--model", "oracle", "--eval-num-shards", "3")
    result.stderr.fnmatch_lines(["*--eval-num-shards and --eval-shard-index go together*"])


@pytest.mark.slow
def test_merge_gates_on_the_merged_summary(pytester) -> None:
    add_eval_module(pytester)
    for index in range(2):
        pytester.runpytest("--model", "always-true", "--eval-num-shards", "2", "--eval-shard-index", str(index))
    shards = sorted((pytester.path / "results").glob("always-true_zeroshot_shard*of2"))
    passed = merge_cli(*shards, "--min-accuracy", "0.4")
    assert passed.returncode == 0 and "gate min-accuracy: passed" in passed.stdout
    failed = merge_cli(*shards, "--min-accuracy", "0.6")
    assert (
        failed.returncode == 1
        and "gate min-accuracy: FAILED (overall accuracy 0.5000, required >= 0.6)" in failed.stdout
    )


# --- the example workflow for the full bank ---


def test_the_example_workflow_runs_every_shard_with_options_that_exist(pytester) -> None:
    workflow = yaml.safe_load((PROJECT_ROOT / ".github" / "workflows" / "full-bank.yml").read_text())
    shards = workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(int(workflow["env"]["NUM_SHARDS"])))
    runs = [step["run"] for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]
    eval_run = next(r for r in runs if r.startswith("pytest evals"))
    merge_run = next(r for r in runs if r.startswith("reasoning-evals merge"))
    pytest_help = pytester.runpytest("--help").stdout.str()
    merge_help = subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", "merge", "--help"], capture_output=True, text=True
    ).stdout
    for run, help_text in ((eval_run, pytest_help), (merge_run, merge_help)):
        for option in re.findall(r"(--[a-z][a-z-]+)", run):
            assert option in help_text, f"{option} is not an option of: {run.split()[0:3]}"
    assert "--eval-resume" in eval_run and "--eval-num-shards $NUM_SHARDS" in eval_run
    assert any("build-bank --seed 42 --scale full" in r for r in runs)


@pytest.mark.slow
def test_merge_refuses_a_shard_that_stopped_early(pytester) -> None:
    add_eval_module(pytester)
    for index in range(2):
        pytester.runpytest("--model", "oracle", "--eval-num-shards", "2", "--eval-shard-index", str(index))
    shards = sorted((pytester.path / "results").glob("oracle_zeroshot_shard*of2"))
    summary_file = shards[1] / "summary.json"
    summary = json.loads(summary_file.read_text())  # plant what a run stopped by an interrupt writes
    summary.update(complete=False, incomplete_reason="interrupted")
    summary_file.write_text(json.dumps(summary))
    refused = merge_cli(*shards)
    assert refused.returncode == 2
    assert f"incomplete shard(s): {shards[1]} (interrupted)" in refused.stderr and "--allow-partial" in refused.stderr
    partial = merge_cli(*shards, "--allow-partial", "--min-accuracy", "0.5")
    assert partial.returncode == 1, partial.stdout  # merged, but an incomplete run is not a pass
    merged = json.loads((pytester.path / "results" / "oracle_zeroshot" / "summary.json").read_text())
    assert merged["complete"] is False and merged["incomplete_reason"] == "shard 1: interrupted"
    assert "gate complete: FAILED" in partial.stdout


@pytest.mark.slow
def test_shards_recorded_at_two_prices_and_two_server_addresses_merge(pytester, fake_key) -> None:
    # a price corrected between two CI shards, or each shard's local server on its own port,
    # changes no answer: the shards are one run (they were refused: "config_hash differs")
    add_eval_module(pytester)
    cases = str(small_bank(pytester.path / "bank.jsonl"))
    shard_dirs = []
    for index, price in enumerate((1.0, 2.0)):
        with FakeProvider() as server:
            server.responder = answer_by_text
            args = fake_run_args(pytester, server.openai_base, cases, price_in=price)
            result = pytester.runpytest(*args, "--eval-num-shards", "2", "--eval-shard-index", str(index))
        assert result.ret == 0, result.stdout.str()
        shard_dirs.append(next((pytester.path / "results").glob(f"fake_zeroshot*_shard{index}of2")))
    result = merge_cli(*shard_dirs, "--out", pytester.path / "merged")
    assert result.returncode == 0, result.stderr
    assert "merge: 2 shards" in result.stdout
