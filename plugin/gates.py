"""Gates: the checks on a run's summary that decide the session's exit status (SPEC 7)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

GATES_FILE = "gates.json"  # in every run directory: the verdicts, for report.html and for CI scripts


@dataclass(frozen=True)
class GateResult:
    name: str
    passed: bool
    detail: str


def gate_line(gate: GateResult) -> str:
    return f"gate {gate.name}: {'passed' if gate.passed else 'FAILED'} ({gate.detail})"


def write_gates(run_dir: Path, gates: list[GateResult]) -> None:
    from pytest_reasoning_evals.results import write_json

    write_json(run_dir / GATES_FILE, {"gates": [dataclasses.asdict(g) for g in gates],
                                      "passed": all(g.passed for g in gates)})


def read_gates(run_dir: Path) -> list[GateResult]:
    """The verdicts a run wrote ([] for a run directory written before gates.json existed)."""
    try:
        data = json.loads((run_dir / GATES_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    return [GateResult(g["name"], bool(g["passed"]), str(g["detail"])) for g in data["gates"]]
