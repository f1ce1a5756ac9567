"""Gates: the checks on a run's summary that decide the session's exit status (SPEC 7)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

GATES_FILE = "gates.json"  # in every run directory: the verdicts, for report.html and for CI scripts
SHOWN_DETAIL = 200  # characters of a gate's detail in its terminal line (gates.json keeps all of it)


@dataclass(frozen=True)
class GateResult:
    name: str
    passed: bool
    detail: str


def gate_line(gate: GateResult) -> str:
    """A gate's verdict on one terminal line: a provider's multi-line error body in its detail is
    collapsed to one line and cut (its whole text is in gates.json)."""
    detail = " ".join(gate.detail.split())
    if len(detail) > SHOWN_DETAIL:
        detail = detail[: SHOWN_DETAIL - 1].rstrip() + "…"
    return f"gate {gate.name}: {'passed' if gate.passed else 'FAILED'} ({detail})"


def write_gates(run_dir: Path, gates: list[GateResult]) -> None:
    from pytest_reasoning_evals.results import write_json

    write_json(
        run_dir / GATES_FILE, {"gates": [dataclasses.asdict(g) for g in gates], "passed": all(g.passed for g in gates)}
    )


class GatesFileError(ValueError):
    """gates.json cannot be read back; the message names it."""


def read_gates(run_dir: Path) -> list[GateResult]:
    """The verdicts a run wrote ([] for a run directory written before gates.json existed);
    GatesFileError naming the file when it is not what a run writes."""
    path = run_dir / GATES_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, RecursionError, ValueError) as exc:
        raise GatesFileError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from None
    gates = data.get("gates") if isinstance(data, dict) else None
    if not isinstance(gates, list) or not all(
        isinstance(g, dict) and isinstance(g.get("name"), str) and isinstance(g.get("passed"), bool) and "detail" in g
        for g in gates
    ):
        raise GatesFileError(f"{path}: not the file a run writes (a list of gates with name, passed and detail)")
    return [GateResult(g["name"], g["passed"], str(g["detail"])) for g in gates]
