"""A dialectic run directory -> what report.html shows (variant_summary.json, per_response.jsonl,
multiturn_summary.json, cross_provider_summary.json, run_meta.json, gates.json, comparison.json), and its charts."""

from __future__ import annotations

import contextlib
import statistics
from collections import Counter
from pathlib import Path

from pytest_reasoning_evals.dialectic import judge
from pytest_reasoning_evals.dialectic.costs import answer_costs
from pytest_reasoning_evals.dialectic.regression import BaselineError, compare, load_responses
from pytest_reasoning_evals.errors import ReportError
from pytest_reasoning_evals.gates import read_gates
from pytest_reasoning_evals.report.runs import DEFAULT_ALPHA, read_json, read_json_lines, row_json

DIMENSIONS = judge.DIMENSIONS
TEMPLATE = "pytest_reasoning_evals.dialectic:report.html.j2"  # extends the generic page.html.j2
TABLE_SCRIPT = "pytest_reasoning_evals.dialectic:report.js"  # what a row of the item table shows


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def _dimension_medians(responses: list[dict], variants: list[str]) -> dict[str, dict[str, float | None]]:
    """Per variant and judge dimension: the median over its responses of the judges' median."""
    out = {}
    for variant in variants:
        scored = [r["judge_scores"] for r in responses if r["variant"] == variant and r.get("judge_scores")]
        out[variant] = {d: _median([s[d] for s in scored if s.get(d) is not None]) for d in DIMENSIONS}
    return out


def _response_row(r: dict) -> dict:
    return {
        "id": f"{r['query_id']}@{r['variant']}",
        "case": r["query_id"],
        "variant": r["variant"],
        "model": r["model"],
        "category": r.get("category"),
        "expected_mode": r.get("expected_mode"),
        "mode": r.get("mode"),
        "status": "error"
        if r.get("error")
        else ("hard fail" if r["hard_fail"] else "passed" if all((r.get("checks") or {}).values()) else "failed"),
        "score": r.get("score"),
        "confidence": r["metrics"].get("confidence"),
        "pcc_ceiling": r.get("pcc_ceiling"),
        "checks": r.get("checks"),
        "judge_scores": r.get("judge_scores"),
        "judge": r.get("judge"),
        "latency_ms": r.get("latency_ms"),
        "cost_usd": r.get("cost"),
        "error": r.get("error"),
        "query": r.get("query"),
        "raw": r.get("text"),
        "cruxes": r.get("cruxes"),
    }


def _comparison(run_dir: Path, baseline: Path | None, responses: list[dict]) -> dict | None:
    """The comparison with `baseline` (--baseline), else the one the run wrote, if any."""
    if baseline is None:
        return read_json(run_dir / "comparison.json", required=False)
    try:
        return compare(load_responses(baseline), responses, alpha=DEFAULT_ALPHA)
    except BaselineError as exc:
        raise ReportError(str(exc)) from None


def _run_cost(responses: list[dict], multiturn: dict, cross: dict) -> float:
    """What the run's answers cost, each call once (costs.answer_costs), as the terminal's cost line says."""
    parts, _ = answer_costs(responses, multiturn.get("conversations_detail", []), cross.get("comparisons", []))
    return sum(parts.values())


def read_run(run_dir: Path, baseline: Path | None, cleanup: contextlib.ExitStack) -> dict | None:
    """The view of a dialectic run directory (the one with a variant_summary.json), else None."""
    if not (run_dir / "variant_summary.json").exists():
        return None

    variant_file = read_json(run_dir / "variant_summary.json")
    responses = read_json_lines(run_dir / "per_response.jsonl")
    multiturn = read_json(run_dir / "multiturn_summary.json", required=False) or {"conversations": 0}
    cross = read_json(run_dir / "cross_provider_summary.json", required=False) or {"queries": 0}
    meta = read_json(run_dir / "run_meta.json", required=False) or {}
    comparison = _comparison(run_dir, baseline, responses)
    variants = variant_file["variants"]
    names = [v["variant"] for v in variants]
    turns = Counter(
        "unresolved" if c["turns_to_resolution"] is None else str(c["turns_to_resolution"])
        for c in multiturn.get("conversations_detail", [])
        if not c.get("not_judged")  # never judged: neither resolved nor unresolved
    )
    model = meta.get("model") or (variants[0]["model"] if variants else run_dir.name)
    return {
        "kind": "dialectic",
        "template": TEMPLATE,
        "charts": draw_charts,
        "table_script": TABLE_SCRIPT,
        "title": f"{model} (dialectic)",
        "run_dir": str(run_dir),
        "header": {
            "model": model,
            "judges": meta.get("judges"),
            "judge_panel": meta.get("judge_panel"),
            "self_judged": meta.get("self_judged"),
            "variants": meta.get("variants") or [{"name": n, "prompt_sha256": None} for n in names],
            "cases": meta.get("cases"),
            "started": meta.get("timestamp"),
            "seconds": meta.get("execution_time_seconds"),
            "complete": meta.get("complete", True),
            "incomplete_reason": meta.get("incomplete_reason"),
            "cost_usd": _run_cost(responses, multiturn, cross),
        },
        "gates": read_gates(run_dir),
        "pass_rule": variant_file.get("pass_rule"),
        "judge_agreement": variant_file.get("judge_agreement"),
        "variants": variants,
        "dimensions": DIMENSIONS,
        "dimension_medians": _dimension_medians(responses, names),
        "multiturn": {k: v for k, v in multiturn.items() if k != "conversations_detail"},
        "turns_histogram": sorted(
            turns.items(), key=lambda kv: (kv[0] == "unresolved", int(kv[0]) if kv[0].isdigit() else 0)
        ),
        "cross_provider": cross,
        "comparison": comparison,
        "rows": lambda: (row_json(_response_row(r)) for r in responses),  # JSON text per row
    }


def draw_charts(view: dict) -> dict[str, str]:
    from pytest_reasoning_evals.report import charts

    out = {}
    medians = view["dimension_medians"]
    if any(v is not None for per in medians.values() for v in per.values()):
        out["dimensions"] = charts.grouped_bars(
            "judge-dimensions",
            list(view["dimensions"]),
            [(variant, [per[d] for d in view["dimensions"]]) for variant, per in medians.items()],
            "median judge score (0-10)",
            xmax=10,
        )
    if view["turns_histogram"]:
        out["turns"] = charts.count_bars(
            "turns-to-resolution",
            [f"{k} turn(s)" if k != "unresolved" else k for k, _ in view["turns_histogram"]],
            [n for _, n in view["turns_histogram"]],
            "conversations",
        )
    return out
