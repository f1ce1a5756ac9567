"""Dialectic runs in the runs table (`reasoning-evals runs`, runs_table.py): a row per variant x model
of each run directory, from its variant_summary.json (no paired comparison: scores are not right/wrong)."""

from __future__ import annotations

import json
from pathlib import Path

COLUMNS = [
    ("run", "run", "text"),
    ("variant", "variant", "text"),
    ("model", "model", "text"),
    ("cases", "cases", "int"),
    ("mean_score", "mean score", "float"),
    ("hard_fails", "hard fails", "int"),
    ("pcc_compliance", "PCC compliance", "pct"),
    ("mode_accuracy", "mode accuracy", "pct"),
    ("judge_agreement", "judge agreement", "pct"),
    ("cost_usd", "cost", "usd"),
    ("tokens", "tokens", "int"),
    ("date", "date", "date"),
    ("complete", "complete", "bool"),
    ("note", "note", "text"),
]


def _rows(directory: Path) -> list[dict]:
    variants = json.loads((directory / "variant_summary.json").read_text(encoding="utf-8"))["variants"]
    meta = json.loads((directory / "run_meta.json").read_text(encoding="utf-8"))
    page = directory / "report.html"
    complete = meta.get("complete", True)
    return [
        {
            "run": directory.name,
            "path": str(directory),
            "report": str(page) if page.is_file() else None,
            "variant": v["variant"],
            "model": v["model"],
            "cases": v["test_cases"],
            "mean_score": v["mean_score"],
            "hard_fails": v["hard_fails"],
            "pcc_compliance": v["pcc_compliance"],
            "mode_accuracy": v["mode_accuracy"],
            "judge_agreement": v["judge_agreement"],
            "cost_usd": v["cost_usd"],
            "tokens": v["tokens"],
            "date": meta.get("timestamp"),
            "complete": complete,
            "note": "" if complete else f"INCOMPLETE: {meta.get('incomplete_reason')}",
        }
        for v in variants
    ]


def runs_table(directories: list[Path]) -> dict | None:
    """The dialectic table of the runs table; None when no directory is a dialectic run."""
    rows, problems = [], []
    for directory in directories:
        if not (directory / "variant_summary.json").is_file():
            continue
        try:
            rows.extend(_rows(directory))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            problems.append(f"{directory}: not read ({type(exc).__name__}: {exc})")
    if not rows and not problems:
        return None
    return {
        "protocol": "dialectic",
        "title": "Dialectic runs (variant x model)",
        "columns": COLUMNS,
        "rows": rows,
        "comparisons": [],
        "problems": problems,
    }
