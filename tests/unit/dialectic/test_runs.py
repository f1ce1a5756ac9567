"""dialectic/runs.py in the runs table: each row named by what differs between the rows shown."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_reasoning_evals.runs_table import collect


def dialectic_run(folder: Path, name: str, max_tokens: int, prompt_sha256: str) -> None:
    """A finished dialectic run directory: its variants' summary and its meta."""
    run = folder / name
    run.mkdir(parents=True)
    variants = [
        {"variant": v, "model": "m", "test_cases": 2, "mean_score": 5.0, "hard_fails": 0, "pcc_compliance": 1.0}
        | {"mode_accuracy": 0.5, "judge_agreement": None, "cost_usd": 0.0, "tokens": 10}
        for v in ("baseline", "careful")
    ]
    (run / "variant_summary.json").write_text(json.dumps({"variants": variants}))
    meta = {
        "model": "m",
        "max_tokens": max_tokens,
        "judges": ["j1", "j2"],
        "variants": [{"name": "baseline", "prompt_sha256": None}, {"name": "careful", "prompt_sha256": prompt_sha256}],
        "cases": {"path": "/p/cases/team.yaml", "sha256": "ab" * 32},
        "timestamp": "2026-11-28T12:00:00+00:00",
        "complete": True,
    }
    (run / "run_meta.json").write_text(json.dumps(meta))


def test_dialectic_rows_are_named_by_the_variant_and_what_else_differs_between_runs(tmp_path) -> None:
    dialectic_run(tmp_path, "m_dialectic_team-1", 256, "1" * 64)
    dialectic_run(tmp_path, "m_dialectic_team-2", 512, "2" * 64)
    (table,) = [t for t in collect([tmp_path])["tables"] if t["id"] == "dialectic"]
    labels = sorted(row["label"] for row in table["rows"])
    assert labels == [
        "baseline, max tokens 256",
        "baseline, max tokens 512",
        "careful@11111111, max tokens 256",  # one variant name, two prompt texts
        "careful@22222222, max tokens 512",
    ]
    assert table["common"] == ["model m", "cases file team.yaml", "judges j1, j2", "epochs 1"]
