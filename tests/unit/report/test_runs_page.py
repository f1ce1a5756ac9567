"""report/runs_page.py: the Pareto front of accuracy against cost, the delta matrix's halves."""

from __future__ import annotations

from pytest_reasoning_evals.report.runs_page import matrix, pareto


def test_pareto_keeps_the_runs_no_other_is_both_cheaper_and_more_accurate() -> None:
    # (cost, accuracy): the cheap weak run and the dear strong one are on it; the dear weak one
    # and a copy beaten on cost are not; two identical runs are both on it
    points = [(0.0, 0.5), (1.0, 0.9), (2.0, 0.6), (1.5, 0.9), (0.0, 0.5)]
    assert pareto(points) == [True, True, False, False, True]
    assert pareto([]) == []


def test_matrix_holds_each_pair_twice_with_opposite_deltas() -> None:
    rows = [{"run": "a", "label": "model a"}, {"run": "b", "label": "model b"}, {"run": "c", "label": "model c"}]
    comparison = {"a": "a", "b": "b", "delta": 0.25, "significant": True, "p_holm": 0.01, "n_paired": 8}
    m = matrix(rows, [comparison])
    assert m["runs"] == [{"run": "a", "label": "model a"}, {"run": "b", "label": "model b"}]
    assert [r["label"] for r in m["rows"]] == ["model a", "model b"]
    (a_a, a_b), (b_a, b_b) = (r["cells"] for r in m["rows"])
    assert a_a is None and b_b is None
    assert (a_b["text"], b_a["text"]) == ("+25.0%", "-25.0%") and a_b["significant"]
