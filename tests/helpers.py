"""Shared helpers for the harness's own tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EVAL_MODULE = (PROJECT_ROOT / "evals" / "test_chaosbench.py").read_text(encoding="utf-8")
REFERENCE = PROJECT_ROOT.parent / "shared" / "reference"


def add_eval_module(pytester: pytest.Pytester) -> None:
    """The project's real ChaosBench eval module, copied into the pytester directory."""
    pytester.makepyfile(test_chaosbench=EVAL_MODULE)


def run_dir(pytester: pytest.Pytester, model: str, mode: str = "zeroshot") -> Path:
    return pytester.path / "results" / f"{model}_{mode}"


def read_summary(pytester: pytest.Pytester, model: str, mode: str = "zeroshot") -> dict:
    return json.loads((run_dir(pytester, model, mode) / "summary.json").read_text())


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def question(id: str, truth: str = "TRUE", family: str = "atomic", split: str = "core", **extra) -> dict:
    record = {
        "id": id,
        "question": f"Is system {id} deterministic?",
        "ground_truth": truth,
        "family": family,
        "split": split,
        "system_id": "lorenz63",
        "predicates": [{"name": "Deterministic", "polarity": "positive"}],
        "template": "atomic.is_property.v1",
    }
    record.update(extra)
    return record
