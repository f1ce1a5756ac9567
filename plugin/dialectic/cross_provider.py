"""Cross-provider comparison (SPEC 6.6): the same case answered by several models, normalised
fields, the same judge rubric for all, quality-adjusted efficiency, the methodology's
comparison JSON per query and a summary with rankings."""

from __future__ import annotations

import statistics

from pytest_reasoning_evals.dialectic.records import CompletionRecord, CrossProviderRecord, ProviderEntry


def provider_entry(
    alias: str, completion: CompletionRecord, composite_score: float | None, judge_cost: float = 0.0
) -> ProviderEntry:
    """One model's row: normalised fields plus the derived ones (null where undefined), and what
    judging its response cost when it cost anything (the run's cost line counts it)."""
    total = completion["input_tokens"] + completion["output_tokens"]
    latency_s = completion["latency_ms"] / 1000
    cost = completion["cost_usd"]
    return {
        **({"judge_cost_usd": judge_cost} if judge_cost else {}),  # absent when free: the pinned summaries stay
        "model": completion["model"],
        "provider": completion["provider"],
        "input_tokens": completion["input_tokens"],
        "output_tokens": completion["output_tokens"],
        "latency_ms": completion["latency_ms"],
        "cost_usd": cost,
        "composite_score": composite_score,
        "total_tokens": total,
        "tokens_per_second": completion["output_tokens"] / latency_s if latency_s > 0 else None,
        "cost_per_mtok": cost / total * 1e6 if total else None,
        "efficiency": composite_score / (cost * 100) if cost and composite_score is not None else None,
    }


def _best(providers: dict[str, ProviderEntry], key: str, lowest: bool = False) -> str | None:
    """The alias with the highest (or lowest) value; ties go to the first alias by name."""
    scored = [(v[key] if lowest else -v[key], alias) for alias, v in providers.items() if v[key] is not None]
    return min(scored)[1] if scored else None


def comparison(query_id: str, providers: dict[str, ProviderEntry]) -> CrossProviderRecord:
    """The methodology's comparison schema for one query."""
    return {
        "query_id": query_id,
        "providers": providers,
        "comparison": {
            "best_quality": _best(providers, "composite_score"),
            "best_cost": _best(providers, "cost_usd", lowest=True),
            "quality_adjusted_efficiency": {alias: v["efficiency"] for alias, v in providers.items()},
        },
    }


def _mean(values: list) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


def summarize(comparisons: list[CrossProviderRecord]) -> dict:
    """cross_provider_summary.json: providers compared, rankings, per-provider means and totals."""
    aliases = sorted({alias for c in comparisons for alias in c["providers"]})
    summaries = {}
    for alias in aliases:
        rows = [c["providers"][alias] for c in comparisons if alias in c["providers"]]
        summaries[alias] = {
            "model": rows[0]["model"],
            "queries": len(rows),
            "mean_composite_score": _mean([r["composite_score"] for r in rows]),
            "total_cost_usd": sum(r["cost_usd"] for r in rows),
            "total_tokens": sum(r["total_tokens"] for r in rows),
            "mean_latency_ms": _mean([r["latency_ms"] for r in rows]),
            "mean_tokens_per_second": _mean([r["tokens_per_second"] for r in rows]),
            "mean_efficiency": _mean([r["efficiency"] for r in rows]),
        }

    def ranking(key: str) -> list[str]:
        ranked = [a for a in aliases if summaries[a][key] is not None]
        return sorted(ranked, key=lambda a: (-summaries[a][key], a))

    return {
        "providers_compared": aliases,
        "queries": len(comparisons),
        "rankings": {"by_quality": ranking("mean_composite_score"), "by_efficiency": ranking("mean_efficiency")},
        "provider_summaries": summaries,
        "comparisons": sorted(comparisons, key=lambda c: c["query_id"]),
    }
