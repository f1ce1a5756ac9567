"""Regression baselines: replaying the committed cassettes reproduces the committed summaries
exactly (snapshots/), serially and under xdist. A change to a prompt, the parser or the harness
that moves any number fails here; regenerate deliberately with --force-regen."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from helpers import DIALECTIC_MODULE, PROJECT_ROOT, add_eval_module, read_summary, use_repo_cassettes

from pytest_reasoning_evals.chaosbench.questions import load_questions
from pytest_reasoning_evals.options import DEFAULT_MODEL
from pytest_reasoning_evals.shipped import shipped

SNAPSHOTS = PROJECT_ROOT / "snapshots"
# (mode, selection): the default suite zero-shot, and the chain-of-thought subset that has cassettes
# and the first five dialogues
COT_SUBSET = (
    "00001 or 00002 or 00003 or 00004 or 00005"  # the first five questions of each family
    " or dlg-0001 or dlg-0002 or dlg-0003 or dlg-0004 or dlg-0005"
)
RUNS = {"zeroshot": [], "cot": ["-k", COT_SUBSET]}


def dialectic_summaries(directory) -> dict:
    """What the dialectic baseline pins: every per-response result and the three summaries (the
    query and reply texts are the cassettes' own, which the results are read from)."""
    per_response = [
        {k: v for k, v in json.loads(line).items() if k not in ("query", "text")}
        for line in (directory / "per_response.jsonl").read_text().splitlines()
    ]
    return {
        "per_response": per_response,
        "variants": json.loads((directory / "variant_summary.json").read_text()),
        "multiturn": json.loads((directory / "multiturn_summary.json").read_text()),
        "cross_provider": json.loads((directory / "cross_provider_summary.json").read_text()),
        "spotcheck_queue": [
            json.loads(line)["review_id"] for line in (directory / "spotcheck_queue.jsonl").read_text().splitlines()
        ],
    }


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.parametrize("mode", list(RUNS))
def test_replay_reproduces_the_committed_summary(pytester, data_regression, mode: str, workers: str) -> None:
    add_eval_module(pytester)
    result = pytester.runpytest_subprocess("--eval-mode", mode, *RUNS[mode], "-n", workers)
    assert result.ret == 0, result.stdout.str()
    assert "cassette miss" not in result.stdout.str()
    summary = read_summary(pytester, DEFAULT_MODEL, mode, subset=bool(RUNS[mode]))  # -k: a subset run
    data_regression.check(summary, fullpath=SNAPSHOTS / f"{DEFAULT_MODEL}_{mode}.summary.yml")


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["0", "2"])
def test_dialectic_replay_reproduces_the_committed_summaries(pytester, data_regression, workers: str) -> None:
    pytester.makepyfile(test_dialectic=DIALECTIC_MODULE)
    use_repo_cassettes(pytester)
    # nothing listens there
    result = pytester.runpytest_subprocess("-n", workers, "--eval-base-url", "http://127.0.0.1:9/v1")
    assert result.ret == 0, result.stdout.str()
    assert "cassette miss" not in result.stdout.str()
    data_regression.check(
        dialectic_summaries(pytester.path / "results" / f"{DEFAULT_MODEL}_dialectic"),
        fullpath=SNAPSHOTS / f"{DEFAULT_MODEL}_dialectic.summary.yml",
    )


@pytest.mark.slow
def test_the_replay_matches_the_committed_baseline_item_by_item(pytester) -> None:
    """snapshots/<model>_zeroshot.baseline.json is what the PR workflow compares with."""
    add_eval_module(pytester)
    baseline = SNAPSHOTS / f"{DEFAULT_MODEL}_zeroshot.baseline.json"
    result = pytester.runpytest_subprocess(f"--eval-baseline={baseline}", "--eval-fail-on-regression", "-n", "2")
    assert result.ret == 0, result.stdout.str()
    comparison = json.loads((pytester.path / "results" / f"{DEFAULT_MODEL}_zeroshot" / "comparison.json").read_text())
    bank = load_questions(shipped("chaosbench"))
    every_item = len({q.dialogue_id or q.id for q in bank})  # a dialogue is one item
    assert (comparison["n_paired"], comparison["fixed"], comparison["broken"]) == (every_item, 0, 0)
    assert comparison["n_current_only"] == comparison["n_baseline_only"] == 0


def test_the_pull_request_workflow_uses_options_that_exist(pytester) -> None:
    workflow = yaml.safe_load((PROJECT_ROOT / ".github" / "workflows" / "evals.yml").read_text())
    runs = [step["run"] for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]
    replay = next(r for r in runs if r.startswith("pytest evals"))
    help_text = pytester.runpytest("--help").stdout.str()
    for option in re.findall(r"(--eval-[a-z-]+)", replay):
        assert option in help_text, option
    baseline = re.search(r"--eval-baseline=(\S+)", replay).group(1)
    assert (PROJECT_ROOT / baseline).is_file()
