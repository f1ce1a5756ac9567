"""chaosbench/regression.py: pairs, fixed/broken, the exact McNemar p-value against an independent
binomial test; failed calls of either run left out of the pairs; what a small set could detect."""

from __future__ import annotations

import math
import time

import pytest
from helpers import question_row
from scipy.stats import binomtest

from pytest_reasoning_evals.chaosbench.regression import (
    BASELINE_FORMAT,
    compare,
    comparison_lines,
    dump_baseline,
    load_baseline,
    mcnemar_exact,
)
from pytest_reasoning_evals.chaosbench.rows import QuestionRow
from pytest_reasoning_evals.providers.base import MISS


def item(correct: bool, family: str = "atomic", split: str = "core", gold: bool = True) -> dict:
    return {"correct": correct, "gold": gold, "family": family, "split": split}


def record(id: str, status: str, family: str = "atomic", split: str = "core", error: str | None = None) -> QuestionRow:
    label = {"correct": "TRUE", "wrong": "FALSE"}.get(status)
    gold = None if status == "no_gold" else "TRUE"
    return question_row(id, gold, label, family=family, split=split, error=error)


@pytest.mark.parametrize(("broken", "fixed"), [(0, 0), (1, 0), (5, 1), (7, 7), (30, 12), (3, 40), (400, 350)])
def test_mcnemar_matches_an_independent_binomial_test(broken: int, fixed: int) -> None:
    n = broken + fixed
    expected = 1.0 if n == 0 else binomtest(min(broken, fixed), n, 0.5).pvalue
    assert mcnemar_exact(broken, fixed) == pytest.approx(expected, rel=1e-9)


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


def test_a_stale_replays_misses_are_failed_calls_counted_apart_not_broken_answers() -> None:
    """Issue 39: 11 of 20 right before, every call a cassette miss now: nothing was measured, so
    nothing is paired, and the summary says so instead of "55% -> 0% REGRESSED"."""
    baseline = {"source": "b.json", "items": {f"q{i:02d}": item(i < 11) for i in range(20)}}
    miss = f"{MISS} for item 'q': the cassette has no matching request (differs in: body): x.yaml"
    records = [record(f"q{i:02d}", "unknown", error=miss) for i in range(18)] + [
        record("q18", "wrong"),
        record("q19", "wrong"),
    ]
    c = compare(baseline, records, alpha=0.05, max_drop=0.1)
    assert (c["n_paired"], c["n_current_failed"], c["broken"], c["fixed"], c["regressed"]) == (2, 18, 0, 0, False)
    lines = comparison_lines(c)
    assert "REGRESSED" not in "\n".join(lines) and "55.0%" not in lines[0]
    assert (
        "  18 items left out: their calls failed in this run (cassette misses or provider errors), counted apart"
        in lines
    )


def test_a_small_set_says_what_change_it_could_detect_and_suggests_the_max_drop() -> None:
    """20 paired questions, 7 broken and 1 fixed: a 30-point drop with p = 0.07 is "no significant
    regression"; the summary says the run could detect about a 40-point change and how to gate a drop."""
    baseline = {"source": "b.json", "items": {f"q{i:02d}": item(i < 10) for i in range(20)}}
    now = [i in (7, 8, 9, 10) for i in range(20)]  # q00-q06 broken, q10 fixed: 50% -> 20%
    records = [record(f"q{i:02d}", "correct" if right else "wrong") for i, right in enumerate(now)]
    c = compare(baseline, records, alpha=0.05, max_drop=None)
    assert (c["n_paired"], c["broken"], c["fixed"]) == (20, 7, 1)
    assert c["p_value"] == pytest.approx(0.0703, abs=1e-4) and not c["regressed"]
    # (z 0.975 + z 0.8) * sqrt(discordant share / n) = 2.8016 * sqrt(0.4 / 20)
    assert c["detectable_delta"] == pytest.approx(0.3962, abs=1e-4)
    assert (
        "  small set: 20 paired items can only detect a paired change of about 39.6 points or more "
        "(alpha 0.05, 80% power, from 8 discordant pairs); to gate a smaller drop whatever the p-value, set "
        "--eval-max-accuracy-drop X"
    ) in comparison_lines(c)
    large = {"source": "b.json", "items": {f"q{i:03d}": item(i % 2 == 0) for i in range(100)}}
    c = compare(large, [record(f"q{i:03d}", "correct") for i in range(100)], alpha=0.05, max_drop=None)
    assert c["detectable_delta"] is not None and not any("small set" in line for line in comparison_lines(c))


def baseline_with(path, n: int):
    items = {f"q-{i:06d}": {"correct": i % 3 > 0, "gold": True, "family": "atomic", "split": "core"} for i in range(n)}
    path.write_text(dump_baseline({"format": BASELINE_FORMAT, "source": "run", "items": items}))
    return path


def cpu_seconds(path) -> float:
    """The least CPU time of three loads (the least is the one the machine disturbed least)."""
    best = math.inf
    for _ in range(3):
        start = time.process_time()
        assert len(load_baseline(path)["items"]) > 0
        best = min(best, time.process_time() - start)
    return best


def test_loading_a_baseline_is_linear_in_its_items(tmp_path) -> None:
    """Four times the items take about four times the CPU, not sixteen (each item's line was found
    by a scan of the file: the full bank's 44,502 items took about 220 s)."""
    small = cpu_seconds(baseline_with(tmp_path / "small.json", 2_000))
    large = cpu_seconds(baseline_with(tmp_path / "large.json", 8_000))
    assert large / small < 8, (small, large)
