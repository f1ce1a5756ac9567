"""Large runs: shards and their merge, resume after a crash (SIGKILL included), the cost budget."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import yaml
from fakeprovider import FakeProvider
from helpers import DEFAULT_CASES, PROJECT_ROOT, add_eval_module, answer_by_text, question, run_dir, write_jsonl

from pytest_reasoning_evals.chaosbench.checkpoints import Checkpoints
from pytest_reasoning_evals.chaosbench.questions import load_questions
from pytest_reasoning_evals.options import shard_of

KEY_VAR = "FAKE_PROVIDER_KEY"
FAKE_MODELS = (
    "models:\n  fake:\n    provider: openai\n    model_id: fake-model\n    api_key_env: "
    + KEY_VAR
    + "\n    base_url: {url}\n    price_in: {price_in}\n    price_out: 0.0\n"
)


def completions(directory) -> list[dict]:
    return [json.loads(line) for line in (directory / "completions.jsonl").read_text().splitlines()]


def merge_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest_reasoning_evals", "merge", *map(str, args)], capture_output=True, text=True
    )


# --- shards ---


def test_shards_are_disjoint_cover_everything_and_do_not_depend_on_order() -> None:
    ids = [q.id for q in load_questions(DEFAULT_CASES)]
    shards = [{i for i in ids if shard_of(i, 3) == k} for k in range(3)]
    assert set().union(*shards) == set(ids) and sum(map(len, shards)) == len(ids)
    assert all(len(s) > len(ids) / 4 for s in shards), "roughly even"
    assert [shard_of(i, 3) for i in reversed(ids)] == [shard_of(i, 3) for i in ids][::-1]


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
    assert json.loads((merged / "gates.json").read_text()) == {"gates": [], "passed": True}


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


# --- resume ---


def test_resume_asks_only_what_is_missing_and_ends_with_the_full_summary(pytester) -> None:
    add_eval_module(pytester)
    assert pytester.runpytest("--model", "random").ret == 0
    directory = run_dir(pytester, "random")
    full_summary = (directory / "summary.json").read_text()
    lines = (directory / "completions.jsonl").read_text().splitlines()
    kept = lines[::2]
    # as a crash leaves it: every other record, and a last line cut short mid-write
    (directory / "completions.jsonl").write_text("\n".join(kept) + "\n" + lines[1][:40])
    result = pytester.runpytest("--model", "random", "--eval-resume", "-n", "2")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [f"*{len(lines) - len(kept)} items*", f"*{len(kept)} items resumed from an earlier run*"]
    )
    asked = result.parseoutcomes()
    assert asked.get("passed", 0) + asked.get("wrong", 0) + asked.get("failed", 0) == len(lines) - len(kept)
    assert (directory / "summary.json").read_text() == full_summary
    assert len(completions(directory)) == len(lines)

    again = pytester.runpytest("--model", "random", "--eval-resume")  # nothing left to ask
    assert again.ret == 0, again.stdout.str()
    assert (directory / "summary.json").read_text() == full_summary


def test_resume_refuses_answers_made_under_another_configuration(pytester) -> None:
    add_eval_module(pytester)
    pytester.runpytest("--model", "random", "--eval-seed", "1", "--eval-max-items", "5")
    result = pytester.runpytest("--model", "random", "--eval-seed", "2", "--eval-max-items", "5", "--eval-resume")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--eval-resume: the answers in * were made with another configuration (differs in: config_hash, seed)*"]
    )


def test_checkpoint_progress_is_written(pytester) -> None:
    add_eval_module(pytester)
    pytester.runpytest("--model", "oracle", "--eval-max-items", "120")
    progress = json.loads((run_dir(pytester, "oracle", subset=True) / "checkpoints" / "progress.json").read_text())
    assert (progress["answered"], progress["not_asked"]) == (120, 0)
    config = json.loads((run_dir(pytester, "oracle", subset=True) / "checkpoints" / "config.json").read_text())
    assert config["max_items"] == 120 and config["model"]["alias"] == "oracle"


def test_a_checkpoint_comes_every_50_records_but_at_most_once_a_second(tmp_path) -> None:
    clock = [100.0]
    points = Checkpoints(tmp_path, clock=lambda: clock[0])
    due = [n for n in range(1, 201) if points.record_added()]
    assert due == []  # 200 records within the same instant (a replay): no fsync yet
    clock[0] += 1.0
    assert [n for n in range(1, 50) if points.record_added()] == [1]  # 50 since the last one, and a second
    clock[0] += 0.5
    assert [n for n in range(1, 101) if points.record_added()] == []  # 100 more, within half a second
    clock[0] += 0.5
    assert [n for n in range(1, 51) if points.record_added()] == [1]  # the second has passed
    points, live = Checkpoints(tmp_path, clock=lambda: clock[0]), []
    for n in range(1, 101):  # live answers, 0.1 s apart: every 50 records
        clock[0] += 0.1
        if points.record_added():
            live.append(n)
    assert live == [50, 100]


# --- a recording run killed with SIGKILL, then resumed ---


def small_bank(path, dialogues: int = 2, turns: int = 3, questions: int = 12):
    records = [question(f"q-{i:02d}", "TRUE" if i % 3 else "FALSE") for i in range(questions)]
    for d in range(dialogues):
        for t in range(1, turns + 1):
            records.append(
                question(
                    f"d{d}-t{t}", "TRUE" if (d + t) % 2 else "FALSE", family="multi_hop", dialogue_id=f"d{d}", turn=t
                )
            )
    return write_jsonl(path, records)


def eval_args(pytester, base_url: str, tag: str, price_in: float = 0.0) -> list[str]:
    models = pytester.path / f"models-{tag}.yaml"
    models.write_text(FAKE_MODELS.format(url=base_url, price_in=price_in))
    return [
        "test_chaosbench.py",
        "--eval-models-file",
        str(models),
        "--model",
        "fake",
        "--eval-cases",
        str(small_bank(pytester.path / "bank.jsonl")),
        "--eval-cassette-dir",
        str(pytester.path / f"cassettes-{tag}"),
        "--eval-out-dir",
        str(pytester.path / f"results-{tag}"),
        "--eval-record-mode",
        "once",
        "-p",
        "no:cacheprovider",
    ]


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_VAR, "fake-key-for-tests")


def bodies(server: FakeProvider) -> list[str]:
    return sorted(json.dumps(r["body"], sort_keys=True) for r in server.requests)


def test_sigkill_mid_dialogue_then_resume_pays_no_call_twice(pytester, key) -> None:
    add_eval_module(pytester)
    with FakeProvider() as reference:  # the uninterrupted run
        reference.responder = answer_by_text
        result = pytester.runpytest_subprocess(*eval_args(pytester, reference.openai_base, "whole")[1:])
        assert result.ret == 0, result.stdout.str()
        expected_bodies = bodies(reference)
    expected = json.loads((pytester.path / "results-whole" / "fake_zeroshot" / "summary.json").read_text())
    assert len(expected_bodies) == 12 + 2 * 3

    with FakeProvider() as server:
        server.responder = answer_by_text
        server.hold_after = 14  # the 12 questions and two turns of the first dialogue; turn 3 hangs
        args = eval_args(pytester, server.openai_base, "killed")
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest", *args],
            cwd=pytester.path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while server.held == 0 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert server.held == 1, "the run never reached the held request"
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        directory = pytester.path / "results-killed" / "fake_zeroshot"
        assert len(completions(directory)) == 12, "every answered question was kept"
        dialogue_cassette = pytester.path / "cassettes-killed" / "fake" / "chaosbench-zeroshot" / "d0.yaml"
        assert dialogue_cassette.read_text().count("request:") == 2, "the paid turns were saved before the kill"

        server.hold_after = None
        result = pytester.runpytest_subprocess(*args[1:], "--eval-resume")
        assert result.ret == 0, result.stdout.str()
        assert bodies(server) == expected_bodies, "each request answered exactly once over both runs"
    assert json.loads((directory / "summary.json").read_text()) == expected
    assert len(completions(directory)) == 14


# --- the cost budget ---


@pytest.mark.parametrize("workers", ["0", "2"])
def test_max_cost_stops_asking_lists_the_rest_and_resume_finishes(pytester, key, workers: str) -> None:
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
        # (with --eval-concurrency N, up to N calls per process: tests/test_concurrency.py)
        summary = json.loads((pytester.path / "results-budget" / "fake_zeroshot" / "summary.json").read_text())
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
        final = json.loads((pytester.path / "results-budget" / "fake_zeroshot" / "summary.json").read_text())
        assert final["not_asked"] == {"count": 0, "ids": []}
        assert final["total_questions"] == 12 and final["dialogue_details"]["total_dialogues"] == 2
        assert len(bodies(server)) == len(set(bodies(server))) == 12 + 2 * 3, "nothing paid twice"
        assert final["cost_usd"] == pytest.approx(3.0 * 18)
        assert final["task_details"]["atomic"]["cost_usd"] == pytest.approx(3.0 * 12)
        assert final["dialogue_details"]["cost_usd"] == pytest.approx(3.0 * 6)


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


# --- an outage stops the run, fast, and is not a pass ---


@pytest.mark.parametrize(("workers", "concurrency"), [("0", "1"), ("2", "1"), ("0", "4"), ("2", "4")])
def test_a_server_failing_every_call_stops_the_run_as_an_outage(pytester, key, workers: str, concurrency: str) -> None:
    from fakeprovider import status

    add_eval_module(pytester)
    with FakeProvider() as server:
        server.script(*[status(503, retry_after=0)] * 500)  # every call fails, retried at once
        result = pytester.runpytest_subprocess(
            *eval_args(pytester, server.openai_base, "outage")[1:], "-n", workers, "--eval-concurrency", concurrency
        )
        asked = len(server.requests)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*provider outage: 3 call(s) in a row failed after their retries (last: HTTP 503*"])
    # 5 attempts per item, 3 failed items per process plus the calls running ahead, and under
    # xdist one more item per other process
    processes, ahead = max(1, int(workers)), int(concurrency) if concurrency != "1" else 0
    assert asked <= 5 * (3 + ahead) * processes + 5 * (processes - 1), (
        f"stopped after 3 failed items per process, not 14: {asked}"
    )
    summary = json.loads((pytester.path / "results-outage" / "fake_zeroshot" / "summary.json").read_text())
    assert summary["complete"] is False and "provider outage" in summary["incomplete_reason"]
    result.stdout.fnmatch_lines(["gate complete: FAILED (the run is incomplete: *provider outage*"])


def test_no_server_at_all_stops_within_one_retry_budget(pytester, key) -> None:
    add_eval_module(pytester)
    started = time.monotonic()
    result = pytester.runpytest_subprocess(*eval_args(pytester, "http://127.0.0.1:9/v1", "down")[1:])
    elapsed = time.monotonic() - started
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        ["*provider outage: 1 call(s) in a row failed after their retries (last: connection failed*"]
    )
    summary = json.loads((pytester.path / "results-down" / "fake_zeroshot" / "summary.json").read_text())
    assert summary["complete"] is False and summary["num_errors"] == 1, "the first item only: the others were not asked"
    assert elapsed < 60, f"one retry budget (~8 s), not one per item: {elapsed:.0f} s"


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
