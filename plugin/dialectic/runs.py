"""Dialectic runs in the runs table (`reasoning-evals runs`, runs_table.py): a row per variant x model
of each run directory, from its variant_summary.json (no paired comparison: scores are not right/wrong),
and a row per model a run compared (--eval-compare-models a,b,c: its runs side by side), from its
cross_provider_summary.json."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_reasoning_evals.runs_table import UNREADABLE, checked, tell_apart, total_saved

COLUMNS = [
    ("label", "run", "text"),  # what differs between the rows shown (runs_table.name_runs)
    ("run", "directory", "text"),
    ("cases", "cases", "int"),
    ("mean_score", "mean score", "float"),
    ("hard_fails", "hard fails", "int"),
    ("pcc_compliance", "PCC compliance", "pct"),
    ("mode_accuracy", "mode accuracy", "pct"),
    ("judge_agreement", "judge agreement", "pct"),
    ("pass_share", "judge pass share by case", "pct"),  # with epochs: the mean over cases of their epochs' share
    ("epochs_agree", "epochs agree", "pct"),  # with epochs: the cases whose epochs all pass or all fail
    ("cost_usd", "cost", "usd"),  # the responses and their judges' calls
    ("cost_saved_usd", "cost saved", "usd"),  # by batches and the prompt cache, against the list price
    ("tokens", "tokens", "int"),
    ("date", "date", "date"),
    ("complete", "complete", "bool"),
    ("note", "note", "text"),
]
# what tells a row from another: (key, what it is called, kind, whether a label shows the value alone)
IDENTITY = [
    ("model", "model", "text", True),
    ("variant", "variant", "text", True),
    ("dataset", "cases file", "text", False),
    ("judges", "judges", "text", False),
    ("max_tokens", "max tokens", "int", False),
    ("epochs", "epochs", "int", False),
]

CROSS_COLUMNS = [
    ("run", "run", "text"),
    ("model", "model", "text"),
    ("model_id", "model id", "text"),
    ("queries", "queries", "int"),
    ("mean_score", "mean score", "float"),
    ("rank", "rank by quality", "int"),
    ("cost_usd", "cost", "usd"),
    ("tokens", "tokens", "int"),
    ("latency_ms", "mean latency (ms)", "int"),
    ("tokens_per_second", "tokens/s", "float"),
    ("efficiency", "quality per cent", "float"),
]


def _cross_rows(directory: Path) -> list[dict]:
    """A row per model of the run's cross-provider comparison, when it compared more than one."""
    path = directory / "cross_provider_summary.json"
    if not path.is_file():
        return []
    summary = json.loads(path.read_text(encoding="utf-8"))
    if len(summary["providers_compared"]) < 2:
        return []
    ranking = summary["rankings"]["by_quality"]
    page = directory / "report.html"
    return [
        {
            "run": directory.name,
            "path": str(directory),
            "report": str(page) if page.is_file() else None,
            "model": alias,
            "model_id": s["model"],
            "queries": s["queries"],
            "mean_score": s["mean_composite_score"],
            "rank": ranking.index(alias) + 1 if alias in ranking else None,
            "cost_usd": s["total_cost_usd"],
            "tokens": s["total_tokens"],
            "latency_ms": None if s["mean_latency_ms"] is None else round(s["mean_latency_ms"]),
            "tokens_per_second": s["mean_tokens_per_second"],
            "efficiency": s["mean_efficiency"],
        }
        for alias, s in summary["provider_summaries"].items()
    ]


def _epoch_cells(variant: dict, meta: dict) -> dict:
    """The epochs each case was asked (1 without --eval-epochs), the pass share by case and how often its epochs agree."""
    block = variant.get("epochs")
    if not isinstance(block, dict):
        return {"epochs": meta.get("epochs", 1), "pass_share": None, "epochs_agree": None}
    return {"epochs": block.get("k"), "pass_share": block.get("pass_share"), "epochs_agree": block.get("agreement")}


def _rows(directory: Path) -> list[dict]:
    variants = json.loads((directory / "variant_summary.json").read_text(encoding="utf-8"))["variants"]
    meta = json.loads((directory / "run_meta.json").read_text(encoding="utf-8"))
    page = directory / "report.html"
    complete = meta.get("complete", True)
    cases, prompts = (
        meta.get("cases") or {},
        {v.get("name"): v.get("prompt_sha256") for v in meta.get("variants") or []},
    )
    return [
        {
            "run": directory.name,
            "path": str(directory),
            "report": str(page) if page.is_file() else None,
            "variant": v["variant"],
            "variant_sha256": prompts.get(v["variant"]) or "",
            "model": v["model"],
            "dataset": Path(cases.get("path") or "?").name,
            "dataset_sha256": cases.get("sha256") or "",
            "judges": ", ".join(meta.get("judges") or []) or "none",
            "max_tokens": meta.get("max_tokens"),
            "cases": v["test_cases"],
            "mean_score": v["mean_score"],
            "hard_fails": v["hard_fails"],
            "pcc_compliance": v["pcc_compliance"],
            "mode_accuracy": v["mode_accuracy"],
            "judge_agreement": v["judge_agreement"],
            **_epoch_cells(v, meta),
            "cost_usd": v["cost_usd"] + v.get("judge_cost_usd", 0.0),  # what the variant paid, judges included
            "cost_saved_usd": total_saved(v.get("cost_saved_usd")),
            "tokens": v["tokens"],
            "date": meta.get("timestamp"),
            "complete": complete,
            "note": "" if complete else f"INCOMPLETE: {meta.get('incomplete_reason')}",
        }
        for v in variants
    ]


def runs_table(directories: list[Path]) -> list[dict]:
    """The dialectic tables of the runs table: variants, and the models compared (each when it has rows)."""
    rows, cross, problems = [], [], []
    for directory in directories:
        if not (directory / "variant_summary.json").is_file():
            continue
        try:  # both read before either is kept: a directory is all rows or one problem line
            own = [checked(row, COLUMNS + [spec[:3] for spec in IDENTITY]) for row in _rows(directory)]
            compared = [checked(row, CROSS_COLUMNS) for row in _cross_rows(directory)]
        except UNREADABLE as exc:
            problems.append(f"{directory}: not read ({type(exc).__name__}: {exc})")
            continue
        rows += own
        cross += compared
    tell_apart(rows, "variant", "variant_sha256")  # one variant name, two prompt texts
    tell_apart(rows, "dataset", "dataset_sha256")
    tables = []
    if rows or problems:
        table = {"id": "dialectic", "protocol": "dialectic", "title": "Dialectic runs (variant x model)"}
        table |= {"columns": COLUMNS, "identity": IDENTITY, "rows": rows, "comparisons": [], "problems": problems}
        tables.append(table)
    if cross:
        tables.append(
            {
                "id": "dialectic-models",
                "protocol": "dialectic",
                "title": "Dialectic models compared (--eval-compare-models)",
                "columns": CROSS_COLUMNS,
                "rows": cross,
                "comparisons": [],
                "problems": [],
            }
        )
    return tables
