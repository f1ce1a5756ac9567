"""What a dialectic run with --eval-epochs K > 1 adds to each variant of variant_summary.json
("epochs"): the cases, not their epochs, are the independent units (epoch_stats.py).

A response passes as its judge item does (PassRule.score_passes on its score: 0 on a hard fail);
a case's share is the share of its judged epochs that pass (a response not answered, or that no
judge gave a usable judgement, has no score and is left out, as a failed call is in ChaosBench).
The pass share is the mean share over the cases, its 95% interval the clustered one, and the
agreement the share of cases whose judged epochs all pass or all fail."""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean

from pytest_reasoning_evals.dialectic.records import PerResponseRecord
from pytest_reasoning_evals.dialectic.verdict import PassRule
from pytest_reasoning_evals.epoch_stats import agreement, clustered_interval


def epoch_block(rows: list[PerResponseRecord], rule: PassRule) -> dict | None:
    """One variant's "epochs" block from its responses; None for a run without epochs (its summary stays as it was)."""
    asked = [row for row in rows if row.get("epoch")]
    if not asked:
        return None
    passes: dict[str, list[bool]] = defaultdict(list)
    for row in asked:
        if row["score"] is not None:
            passes[row["case_id"]].append(rule.score_passes(row["score"]))
    shares = [sum(epochs) / len(epochs) for epochs in passes.values()]
    _, flips = agreement([[str(passed) for passed in epochs] for epochs in passes.values()])
    return {
        "k": max(row["epoch"] for row in asked),
        "cases": len(shares),
        "pass_share": fmean(shares) if shares else None,
        "pass_share_ci95": clustered_interval(shares),
        "agreement": None if flips is None else 1 - flips,
        "interval": "clustered standard error of the per-case pass shares (normal, clipped to [0, 1])",
    }


def epoch_line(variant: dict) -> str:
    """The terminal's line on a variant's epochs: its pass share with the clustered interval, and the agreement."""
    block = variant["epochs"]

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1%}"

    ci = block["pass_share_ci95"]
    interval = f" [{ci[0]:.1%}, {ci[1]:.1%}]" if ci else ""
    return (
        f"variant {variant['variant']} ({variant['model']}): epochs {block['k']} per case, {block['cases']} cases: "
        f"judge pass share {pct(block['pass_share'])}{interval} (clustered by case), "
        f"epochs agree on {pct(block['agreement'])} of cases"
    )
