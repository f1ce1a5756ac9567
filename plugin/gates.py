"""Gates: the checks on a run's summary that decide the session's exit status (SPEC 7)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GateResult:
    name: str
    passed: bool
    detail: str


def gate_line(gate: GateResult) -> str:
    return f"gate {gate.name}: {'passed' if gate.passed else 'FAILED'} ({gate.detail})"
