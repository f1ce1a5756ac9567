"""--eval-estimate's last lines for ChaosBench: the smallest accuracy change a paired comparison of
the selected questions could detect (80% power, the regression gate's alpha), and with --eval-detect
X the questions a change of X needs (epoch_stats.py; docs/chaosbench.md, "How many questions do I need?")."""

from __future__ import annotations

from pathlib import Path

from pytest_reasoning_evals.epoch_stats import DEFAULT_DISCORDANCE, difference_variance, questions_needed, within_noise
from pytest_reasoning_evals.stats import detectable


def discordance(baseline: Path | None, ids: list[str]) -> tuple[float, str]:
    """The share of questions two runs would answer differently, and where the figure comes from:
    twice p(1 - p) of the baseline's accuracy p on these questions (what two runs of that accuracy
    whose errors were independent would show: an upper bound for a prompt change), else a default."""
    if baseline is None:
        return DEFAULT_DISCORDANCE, "a default; --eval-baseline gives one from that run"
    from pytest_reasoning_evals.chaosbench.regression import load_baseline

    items = load_baseline(baseline)["items"]
    right = [items[i]["correct"] for i in ids if i in items and items[i]["gold"] and not items[i]["failed"]]
    if not right:
        return DEFAULT_DISCORDANCE, f"a default; {baseline} has none of these questions"
    p = sum(right) / len(right)
    return 2 * p * (1 - p), f"from {baseline}: accuracy {p:.1%} on {len(right):,} of these questions"


def model_noise(baseline: Path | None, ids: list[str]) -> float:
    """The part of the discordance that is the model's own noise, from a baseline run with epochs
    (epoch_stats.within_noise); 0 without one (epochs are then not counted as narrowing anything)."""
    if baseline is None:
        return 0.0
    from pytest_reasoning_evals.chaosbench.epoch_compare import per_question
    from pytest_reasoning_evals.chaosbench.regression import load_baseline

    wanted = set(ids)
    items = {i: item for i, item in load_baseline(baseline)["items"].items() if item.get("question") in wanted}
    questions = [q for q in per_question(items).values() if not q["failed"] and q["epochs"] > 1]
    if not questions:
        return 0.0
    epochs = min(q["epochs"] for q in questions)
    return within_noise([round(q["share"] * epochs) for q in questions], epochs)


def detect_lines(
    ids: list[str], baseline: Path | None, alpha: float, wanted: float | None, epochs: int = 1
) -> list[str]:
    """The lines: what the selection (question ids, each asked `epochs` times) can detect, and what a wanted change needs."""
    if not ids:
        return []
    psi, source = discordance(baseline, ids)
    variance = difference_variance(psi, model_noise(baseline, ids), epochs)
    smallest = detectable(len(ids), variance, alpha=alpha)
    times = f" asked {epochs} times each" if epochs > 1 else ""
    lines = [
        f"detectable: a paired comparison of these {len(ids):,} questions{times} detects an accuracy change of about "
        f"{smallest:.1%} or more (80% power, alpha {alpha:g}, discordance {psi:.2f}: {source})"
    ]
    if wanted is not None:
        needed = questions_needed(wanted, variance, alpha=alpha)
        lines.append(
            f"to detect a change of {wanted:.1%}: about {needed:,} questions at that discordance "
            f"({'more than' if needed > len(ids) else 'within'} the {len(ids):,} selected)"
        )
    return lines
