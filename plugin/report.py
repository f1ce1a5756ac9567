"""The terminal summary printed at the end of an eval run."""

from __future__ import annotations

from pathlib import Path

from plugin.gates import GateResult


def _pct(value: float | None) -> str:
    return "   n/a" if value is None else f"{value:6.1%}"


def _ci(ci: list[float] | None) -> str:
    return "" if ci is None else f"[{ci[0]:.1%}, {ci[1]:.1%}]"


def summary_lines(summary: dict, gates: list[GateResult], run_dir: Path) -> list[str]:
    lines = [
        f"overall accuracy {_pct(summary['overall_accuracy']).strip()} {_ci(summary['overall_accuracy_ci95'])} "
        f"({summary['num_correct']}/{summary['total_evaluated']} evaluated), "
        f"coverage {_pct(summary['coverage']).strip()}, UNKNOWN {summary['num_unknown']}, "
        f"no gold {summary['num_items_no_gold']}",
    ]
    for title, key in (("family", "task_details"), ("split", "split_details")):
        rows = [(name, d) for name, d in summary[key].items() if d["total"]]
        if not rows:
            continue
        lines.append(f"  {title:<25} {'n':>5} {'acc':>7}  95% CI")
        for name, d in rows:
            lines.append(f"  {name:<25} {d['total']:>5} {_pct(d['accuracy'])}  {_ci(d['accuracy_ci95'])}")
    for gate in gates:
        lines.append(f"gate {gate.name}: {'passed' if gate.passed else 'FAILED'} ({gate.detail})")
    lines.append(f"results: {run_dir}")
    return lines
