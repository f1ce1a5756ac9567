"""Regression baselines: replaying the committed cassettes reproduces the committed summaries
exactly (snapshots/), serially and under xdist. A change to a prompt, the parser or the harness
that moves any number fails here; regenerate deliberately with --force-regen."""

from __future__ import annotations

import pytest
from helpers import PROJECT_ROOT, add_eval_module, read_summary

from plugin.options import DEFAULT_MODEL

SNAPSHOTS = PROJECT_ROOT / "snapshots"
# (mode, selection): the default suite zero-shot, and the chain-of-thought subset that has cassettes
COT_SUBSET = ("00001 or 00002 or 00003 or 00004 or 00005"  # the first five questions of each family
              " or dlg-0001 or dlg-0002 or dlg-0003 or dlg-0004 or dlg-0005")  # and the first five dialogues
RUNS = {"zeroshot": [], "cot": ["-k", COT_SUBSET]}


@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.parametrize("mode", list(RUNS))
def test_replay_reproduces_the_committed_summary(pytester, data_regression, mode: str, workers: str) -> None:
    add_eval_module(pytester)
    result = pytester.runpytest_subprocess("--mode", mode, *RUNS[mode], "-n", workers)
    assert result.ret == 0, result.stdout.str()
    assert "cassette miss" not in result.stdout.str()
    summary = read_summary(pytester, DEFAULT_MODEL, mode)
    data_regression.check(summary, fullpath=SNAPSHOTS / f"{DEFAULT_MODEL}_{mode}.summary.yml")
