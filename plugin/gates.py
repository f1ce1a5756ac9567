"""Gates: the checks on a run's summary that decide the session's exit status (SPEC 7).

Each protocol returns all its verdicts, built with the helpers here; the session only combines
them (and `reasoning-evals merge` calls the protocol's same function)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

COMPARISON_FILE = "comparison.json"  # a run's comparison with its --eval-*baseline
MAX_ERROR_RATE = 0.05  # more items than this whose calls failed measured an outage or a stale recording
GATES_FILE = "gates.json"  # in every run directory: the verdicts, for report.html and for CI scripts
SHOWN_DETAIL = 200  # characters of a gate's detail in its terminal line (gates.json keeps all of it)


@dataclass(frozen=True)
class GateResult:
    name: str
    passed: bool
    detail: str


class BaselineError(Exception):
    """A baseline that cannot be read or used; the message names it."""


def incomplete(name: str, reason: str | None) -> list[GateResult]:
    """Nothing partial is a pass: the failed completeness gate of a run stopped or broken, else none."""
    return [] if reason is None else [GateResult(name, False, reason)]


def at_least(name: str, value: float | None, bound: float, what: str, none: str) -> GateResult:
    """`value` >= `bound`; nothing measured (None, shown as `none`) fails. `what` holds {} for the value."""
    shown = none if value is None else f"{value:.4f}"
    return GateResult(name, value is not None and value >= bound, f"{what.format(shown)}, required >= {bound}")


def at_most(name: str, value: float | None, bound: float, what: str, none: str) -> GateResult:
    """`value` <= `bound`; nothing measured (None, shown as `none`) fails."""
    shown = none if value is None else f"{value:.4f}"
    return GateResult(name, value is not None and value <= bound, f"{what.format(shown)}, allowed <= {bound}")


def failed_share(
    name: str, failed: int, total: int, noun: str, how: str, allowed: float = MAX_ERROR_RATE
) -> list[GateResult]:
    """The gate on the share of `total` whose calls failed: above `allowed` it fails."""
    rate = failed / total
    return [GateResult(name, rate <= allowed, f"{failed} of {total} {noun} ({rate:.1%}) {how}, allowed {allowed:.0%}")]


def compared(
    run_dir: Path, baseline: Path | None, name: str, flag: str, compare
) -> tuple[dict | None, list[GateResult]]:
    """The run's comparison with its baseline (`compare()` makes it), written to comparison.json, or
    the failed gate `name` saying why there is none (`flag`: the option, for the message). Without a
    baseline an earlier run's comparison.json is not this run's, and goes. The run is paid for: its
    outputs are written whatever the comparison does."""
    from pytest_reasoning_evals.results import write_json

    if baseline is None:
        (run_dir / COMPARISON_FILE).unlink(missing_ok=True)
        return None, []
    try:
        comparison = compare()
    except BaselineError as exc:
        return None, [GateResult(name, False, str(exc))]
    except Exception as exc:  # noqa: BLE001 - see above
        (run_dir / COMPARISON_FILE).unlink(missing_ok=True)
        return None, [GateResult(name, False, f"{flag} {baseline}: cannot be compared ({type(exc).__name__}: {exc})")]
    write_json(run_dir / COMPARISON_FILE, comparison)
    return comparison, []


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
