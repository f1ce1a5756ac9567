"""chaosbench/regression.py: pairs, fixed/broken, the exact McNemar p-value against an independent
binomial test."""

from __future__ import annotations

import math
import time

import pytest
from scipy.stats import binomtest

from pytest_reasoning_evals.chaosbench.regression import (
    BASELINE_FORMAT,
    compare,
    dump_baseline,
    load_baseline,
    mcnemar_exact,
)


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
