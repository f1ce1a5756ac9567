"""Statistics of runs whose questions were asked K times (--eval-epochs): a question's score is its
share of epochs right, and the questions, not the epochs, are the independent units.

- accuracy is the mean share; its 95% interval uses the clustered standard error (the standard
  deviation of the shares over sqrt(n): epochs of one question are not independent draws; Miller,
  "Adding error bars to evals", 2024, section 2.3), clipped to [0, 1];
- two runs are compared by an exact sign-flip permutation test on the per-question differences of
  their shares (with one epoch each it is McNemar's exact test), asymptotic beyond EXACT_LIMIT
  questions that differ;
- the change a comparison can detect, and the questions a change needs, come from the variance of
  those differences (paired, normal approximation).
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from statistics import NormalDist, fmean, stdev

from pytest_reasoning_evals.stats import Z95, mcnemar_exact

EXACT_LIMIT = 300  # questions that differ: up to it the test enumerates, beyond it the normal approximation
DEFAULT_DISCORDANCE = 0.2  # the share of questions two runs answer differently, when no baseline says


def clustered_interval(shares: list[float], z: float = Z95) -> list[float] | None:
    """The interval of the mean share right; None under two questions (no spread to measure)."""
    return _mean_interval(shares, 0.0, z)


def _mean_interval(values: list[float], low: float, z: float) -> list[float] | None:
    """mean +- z * its standard error, clipped to [low, 1]; None under two values."""
    if len(values) < 2:
        return None
    mean, error = fmean(values), stdev(values) / math.sqrt(len(values))
    return [max(low, mean - z * error), min(1.0, mean + z * error)]


def majority_accuracy(shares: list[Fraction]) -> float | None:
    """The share of questions most of whose epochs were right, from each question's share of epochs
    right (exact fractions, so a tie is one; a tie counts half)."""
    if not shares:
        return None
    return fmean(1.0 if share > Fraction(1, 2) else 0.5 if share == Fraction(1, 2) else 0.0 for share in shares)


def agreement(labels: list[list[str | None]]) -> tuple[float | None, float | None]:
    """(consistency, flip rate) of the questions' epochs: the mean share of a question's epochs that
    gave its most frequent label (UNKNOWN is a label here), and the share of questions whose epochs
    did not all agree: the run's noise floor."""
    asked = [epochs for epochs in labels if epochs]
    if not asked:
        return None, None
    consistency = fmean(Counter(epochs).most_common(1)[0][1] / len(epochs) for epochs in asked)
    return consistency, fmean(len(set(epochs)) > 1 for epochs in asked)


def sign_flip_test(differences: list[Fraction]) -> float:
    """Two-sided p-value of "the mean difference is 0": under it each question's difference is as
    likely with either sign; the p-value is the share of the 2^m sign patterns of the m non-zero
    differences whose sum is at least as far from 0 as the one observed."""
    nonzero = [abs(d) for d in differences if d]
    if not nonzero:
        return 1.0
    scale = math.lcm(*(d.denominator for d in nonzero))
    sizes = Counter(int(d * scale) for d in nonzero)
    observed = abs(sum(int(d * scale) for d in differences))
    if set(sizes) == {1}:  # one epoch each: the sign test on the discordant pairs
        broken = sum(1 for d in differences if d < 0)
        return mcnemar_exact(broken, len(nonzero) - broken)
    if len(nonzero) > EXACT_LIMIT:
        spread = math.sqrt(sum(size * size * count for size, count in sizes.items()))
        return min(1.0, 2 * (1 - NormalDist().cdf(observed / spread)))
    ways = {0: 1}  # sum -> how many sign patterns give it
    for size, count in sizes.items():
        shifts = [(size * (2 * k - count), math.comb(count, k)) for k in range(count + 1)]
        grown: dict[int, int] = {}
        for total, n in ways.items():
            for shift, times in shifts:
                grown[total + shift] = grown.get(total + shift, 0) + n * times
        ways = grown
    return min(1.0, sum(n for total, n in ways.items() if abs(total) >= observed) / 2 ** len(nonzero))


def difference_interval(differences: list[Fraction], z: float = Z95) -> list[float] | None:
    """The 95% interval of the mean per-question difference (paired, normal approximation)."""
    return _mean_interval([float(d) for d in differences], -1.0, z)


def difference_variance(discordance: float, noise: float = 0.0, epochs: int = 1) -> float:
    """The variance of a question's difference between two runs of `epochs` epochs each, from the
    discordance of one-epoch runs, of which `noise` (twice the mean within-question variance of
    one answer, measured across a baseline's epochs) shrinks by 1/epochs."""
    own = min(noise, discordance)
    return discordance - own + own / epochs


def questions_needed(difference: float, variance: float, *, alpha: float, power: float = 0.8) -> int:
    """The questions a paired comparison needs to detect `difference` at `alpha` with `power`."""
    normal = NormalDist()
    z = normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)
    return math.ceil(z * z * variance / (difference * difference))


def within_noise(right: list[int], epochs: int) -> float:
    """Twice the mean unbiased within-question variance of one answer across `epochs` epochs: the
    part of a one-epoch comparison's discordance that is the model's own noise. 0 with one epoch."""
    if epochs < 2 or not right:
        return 0.0
    return 2 * fmean(r * (epochs - r) / (epochs * (epochs - 1)) for r in right)
