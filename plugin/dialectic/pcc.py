"""Process-confidence coupling (SPEC 6.3): a stated confidence above what the visible process
earns is a hard fail."""

from __future__ import annotations

from pytest_reasoning_evals.dialectic.records import Extraction

TOLERANCE = 1e-9


def pcc_valid(extraction: Extraction, expected_mode: str) -> bool | None:
    """True / False when PCC applies (a numeric confidence was stated and the case expects
    dialectic reasoning), None otherwise. Every labelled confidence must be <= the ceiling."""
    if expected_mode != "dialectic" or extraction["confidence"] is None:
        return None
    ceiling = extraction["pcc_ceiling"]
    return all(value <= ceiling + TOLERANCE for value in extraction["confidences"])


def pcc_reason(extraction: Extraction) -> str:
    """Why the ceiling is what it is, for a hard-fail message."""
    if extraction["oscillation_table"] and extraction["stability"] == "STABLE":
        process = "oscillation table, STABLE"
    elif extraction["iteration_limit"]:
        process = "iteration limit"
    elif extraction["oscillation_table"]:
        process = "oscillation table, not STABLE"
    else:
        process = "no oscillation table"
    worst = max(extraction["confidences"])
    return f"PCC violation: confidence {worst:.2f} > ceiling {extraction['pcc_ceiling']:.2f} ({process})"
