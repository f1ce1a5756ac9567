"""Judge agreement over a run: how often a response's judges agree (the SPEC 6.4 rule), and an
inter-judge reliability figure per dimension, Krippendorff's alpha for interval data.

alpha is computed here in pure Python (the `krippendorff` package needs numpy, which would load
into every pytest session); tests check it against that package."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from pytest_reasoning_evals.dialectic.judge import DIMENSIONS
from pytest_reasoning_evals.dialectic.records import PerResponseRecord


def _pair_sum(values: Sequence[float]) -> float:
    """sum over ordered pairs i != j of (v_i - v_j)^2, as 2 m sum (v - mean)^2 (no m^2 loop)."""
    mean = math.fsum(values) / len(values)
    return 2 * len(values) * math.fsum((v - mean) ** 2 for v in values)


def interval_alpha(units: Iterable[Sequence[float]]) -> float | None:
    """Krippendorff's alpha, interval metric: 1 - D_o / D_e over the units (here: responses) that
    have two or more values (judges' scores). None when no unit has two values, or when every value
    is the same (no variation: agreement cannot be told from chance)."""
    pairable = [list(unit) for unit in units if len(unit) >= 2]
    n = sum(len(unit) for unit in pairable)
    if not pairable:
        return None
    expected = _pair_sum([v for unit in pairable for v in unit]) / (n * (n - 1))
    if expected == 0:
        return None
    observed = math.fsum(_pair_sum(unit) / (len(unit) - 1) for unit in pairable) / n
    return 1 - observed / expected


def judge_agreement(per_response: list[PerResponseRecord]) -> dict:
    """The run's judge agreement: responses judged, those with two or more usable judgements
    (compared), how many of those agree and their share, alpha per dimension, and whether any
    response was judged by its own model."""
    judged = [r["judge"] for r in per_response if r.get("judge")]
    compared = [j for j in judged if j["n_valid"] >= 2]
    agreeing = sum(j["agreement"] is True for j in compared)
    alphas = {}
    for dim in DIMENSIONS:
        alpha = interval_alpha([[g[dim] for g in j["judgements"]] for j in judged])
        alphas[dim] = None if alpha is None else round(alpha, 4)
    return {
        "responses_judged": len(judged),
        "responses_compared": len(compared),
        "agreeing": agreeing,
        "agreement_share": agreeing / len(compared) if compared else None,
        "krippendorff_alpha": alphas,
        "self_judged": any(j["self_judged"] for j in judged),
    }
