"""Small statistics shared by the protocols: Wilson intervals and binary-classifier scores."""

from __future__ import annotations

import math
from statistics import NormalDist

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def wilson_interval(successes: int, total: int, z: float = Z95) -> list[float] | None:
    """Wilson score interval for a binomial proportion; None when there is no trial."""
    if total == 0:
        return None
    p = successes / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return [max(0.0, centre - half), min(1.0, centre + half)]


def confusion(pairs: list[tuple[str, str]], positive: str = "TRUE") -> dict[str, int]:
    """Counts of (gold, predicted) pairs with `positive` as the positive class."""
    counts = {"tp": 0, "tn": 0, "fp": 0, "fn": 0}
    for gold, predicted in pairs:
        if predicted == positive:
            counts["tp" if gold == positive else "fp"] += 1
        else:
            counts["fn" if gold == positive else "tn"] += 1
    return counts


def balanced_accuracy(c: dict[str, int]) -> float | None:
    """Mean of the recall on each class; None unless both classes occur in the gold labels."""
    if not (c["tp"] + c["fn"]) or not (c["tn"] + c["fp"]):
        return None
    return (c["tp"] / (c["tp"] + c["fn"]) + c["tn"] / (c["tn"] + c["fp"])) / 2


def mcc(c: dict[str, int]) -> float | None:
    """Matthews correlation; 0.0 when a margin is empty (a constant predictor), None with no data."""
    tp, tn, fp, fn = c["tp"], c["tn"], c["fp"], c["fn"]
    if tp + tn + fp + fn == 0:
        return None
    denom = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return (tp * tn - fp * fn) / denom if denom else 0.0


def per_class(c: dict[str, int]) -> dict[str, dict]:
    """Precision, recall and F1 of each class (TRUE: tp over the predicted or gold TRUE; FALSE:
    tn likewise) and its support (gold items of the class). A score whose denominator is empty
    is None (nothing measured), and so is F1 then."""

    def scores(hit: int, predicted: int, gold: int) -> dict:
        precision, recall = ratio(hit, predicted), ratio(hit, gold)
        # 2PR / (P + R), which is 2 hit / (predicted + gold)
        f1 = None if precision is None or recall is None else 2 * hit / (predicted + gold)
        return {"precision": precision, "recall": recall, "f1": f1, "support": gold}

    return {
        "TRUE": scores(c["tp"], c["tp"] + c["fp"], c["tp"] + c["fn"]),
        "FALSE": scores(c["tn"], c["tn"] + c["fn"], c["tn"] + c["fp"]),
    }


def mcnemar_exact(down: int, up: int) -> float:
    """Exact two-sided test of paired changes: the binomial test of min(down, up) out of
    down + up at 0.5, doubled and capped at 1 (1.0 with no change). McNemar's test on the
    discordant pairs of right/wrong items; the sign test on paired score differences."""
    n = down + up
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(down, up) + 1))
    return min(1.0, 2 * tail / 2**n)


SMALL_SET = 100  # fewer paired items: a comparison says what change it could detect


def detectable_difference(n: int, discordant: int, *, alpha: float, power: float = 0.8) -> float | None:
    """The smallest paired accuracy difference n pairs could detect with McNemar's test at `alpha`
    (two-sided) with `power`, from the observed share of discordant pairs psi = discordant / n: the
    normal approximation (z_{1-alpha/2} + z_power) * sqrt(psi / n) (conservative: it leaves out the
    -delta^2 of the discordance's variance under the alternative), never below k / n, k the fewest
    discordant pairs, all one way, the exact test calls significant (no discordance observed says
    nothing more); capped at 1. None with no pair."""
    if n == 0:
        return None
    fewest = next(k for k in range(1, n + 2) if k > n or mcnemar_exact(k, 0) < alpha)
    return min(1.0, max(detectable(n, discordant / n, alpha=alpha, power=power), fewest / n))


def detectable(n: int, variance: float, *, alpha: float, power: float = 0.8) -> float | None:
    """The smallest mean paired difference n items detect at `alpha` (two-sided) with `power`, from
    the variance of one item's difference: (z_{1-alpha/2} + z_power) * sqrt(variance / n), capped at 1."""
    if n == 0:
        return None
    normal = NormalDist()
    return min(1.0, (normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)) * math.sqrt(variance / n))


def paired_delta_interval(both: int, broken: int, fixed: int, neither: int, z: float = Z95) -> list[float] | None:
    """95% interval of the change in accuracy between two runs on the same items (after - before),
    from the 2x2 table of paired right/wrong: Newcombe's method 10 (Wilson intervals of the two
    accuracies combined with their correlation; Stat Med 1998, 17:2635). None with no pair."""
    n = both + broken + fixed + neither
    if n == 0:
        return None
    p1, p2 = (both + broken) / n, (both + fixed) / n  # before, after
    l1, u1 = wilson_interval(both + broken, n, z)
    l2, u2 = wilson_interval(both + fixed, n, z)
    margins = (both + broken) * (fixed + neither) * (both + fixed) * (broken + neither)
    phi = (both * neither - broken * fixed) / math.sqrt(margins) if margins else 0.0
    delta = p2 - p1
    low = delta - math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    high = delta + math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    return [max(-1.0, low), min(1.0, high)]


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment of p-values for testing them all at once (family-wise error):
    the i-th smallest is multiplied by (m - i), kept monotone and capped at 1; the given order."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
