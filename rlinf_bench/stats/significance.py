"""Hypothesis tests behind the verdicts and the run-disagreement flag.

Each comparison gives two one-sided p-values:
- ``p_below``: evidence that the success rate is below ``reference - tolerance``;
- ``p_above``: evidence that it is above ``reference``.
A verdict is ``below`` when p_below < alpha, ``above`` when p_above < alpha, else ``within``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rlinf_bench.stats.distributions import chi2_sf, norm_cdf, t_cdf


@dataclass(frozen=True)
class ComparisonOutcome:
    """A test's statistic and its two one-sided p-values."""

    test: str
    statistic: float
    p_below: float
    p_above: float
    units: int


Cdf = Callable[[float], float]


def _t_or_norm(df: int) -> Cdf:
    return (lambda x: t_cdf(x, df)) if df >= 1 else norm_cdf


def _one_sided(numerator: float, se: float, cdf: Cdf) -> tuple[float, float, float]:
    """(statistic, P(stat <= observed), P(stat >= observed)); a zero SE decides by the sign of numerator."""
    if se > 0:
        z = numerator / se
        return z, cdf(z), cdf(-z)  # both reference distributions are symmetric
    if numerator > 0:
        return math.inf, 1.0, 0.0
    if numerator < 0:
        return -math.inf, 0.0, 1.0
    return 0.0, 0.5, 0.5


def compare_to_constant(
    rate: float, effective_n: float, df: int | None, reference: float, tolerance: float, *, clusters: int = 0
) -> ComparisonOutcome:
    """Score test of a clustered success rate against a published (variance-free) number.

    The standard error is taken under the null (p0 (1 - p0) / n_eff), like the Wilson interval, so the
    test and the interval agree and 0 % / 100 % need no special case. ``df`` is the interval's: t with
    C - 1 df when the design effect was estimated, normal (None) when it was assumed.
    A null of 0 or 1 is decided exactly: one failure disproves a 100 % rate.
    """
    cdf = _t_or_norm(df if df is not None else 0)

    def side(p0: float) -> tuple[float, float, float]:
        if p0 <= 0.0:
            return math.inf, 1.0, (0.0 if rate > 0 else 1.0)
        if p0 >= 1.0:
            return -math.inf, (0.0 if rate < 1 else 1.0), 1.0
        return _one_sided(rate - p0, math.sqrt(p0 * (1 - p0) / effective_n), cdf)

    stat, p_below, _ = side(reference - tolerance)
    _, _, p_above = side(reference)
    name = f"one-sided score test vs constant (clustered n_eff, {'t df=' + str(df) if df is not None else 'normal'})"
    return ComparisonOutcome(name, stat, p_below, p_above, clusters)


def paired_test(current: Sequence[float], reference: Sequence[float], tolerance: float) -> ComparisonOutcome:
    """Paired t-test over initial-state clusters on per-state success fractions.

    Differences within a state cancel the state's difficulty, which is where the power comes from.
    """
    if len(current) != len(reference) or not current:
        raise ValueError("paired_test needs the same, non-empty set of clusters on both sides")
    d = np.asarray(current, dtype=float) - np.asarray(reference, dtype=float)
    c = len(d)
    if c < 2:
        # One cluster has no spread to test against: nothing is decisive (a zero SE would call any flip certain).
        return ComparisonOutcome("paired t-test over initial states (one cluster: no test)", 0.0, 1.0, 1.0, c)
    se = float(d.std(ddof=1) / math.sqrt(c))
    dist = _t_or_norm(c - 1)
    mean = float(d.mean())
    stat, p_below, _ = _one_sided(mean + tolerance, se, dist)
    _, _, p_above = _one_sided(mean, se, dist)
    return ComparisonOutcome("paired t-test over initial states", stat, p_below, p_above, c)


def two_proportion_test(
    k1: int, n1: int, deff1: float, k2: int, n2: int, deff2: float, tolerance: float
) -> ComparisonOutcome:
    """Two-proportion z-test (pooled variance), each side's n divided by its design effect.

    Used when the two evaluations did not share initial states, so no pairing is possible.
    """
    if n1 <= 0 or n2 <= 0:
        raise ValueError("two_proportion_test needs episodes on both sides")
    p1, p2 = k1 / n1, k2 / n2
    pooled = (k1 + k2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (deff1 / n1 + deff2 / n2))
    stat, p_below, _ = _one_sided(p1 - p2 + tolerance, se, norm_cdf)
    _, _, p_above = _one_sided(p1 - p2, se, norm_cdf)
    return ComparisonOutcome("two-proportion z-test (design-effect adjusted)", stat, p_below, p_above, n1 + n2)


@dataclass(frozen=True)
class HomogeneityOutcome:
    test: str
    statistic: float
    df: int
    p_value: float


def cochran_q(outcomes: np.ndarray) -> HomogeneityOutcome:
    """Cochran's Q: do R runs have the same success rate, blocking on the initial state?

    ``outcomes`` is a (clusters x runs) 0/1 matrix. Blocks whose runs all agree carry no information
    and drop out of the statistic, so hard states that fail every run do not dilute the test.
    """
    x = np.asarray(outcomes, dtype=float)
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError("cochran_q needs a clusters x runs matrix with at least 2 runs")
    r = x.shape[1]
    col = x.sum(axis=0)
    row = x.sum(axis=1)
    total = float(x.sum())
    denom = r * total - float((row**2).sum())
    q = 0.0 if denom == 0 else (r - 1) * (r * float((col**2).sum()) - total**2) / denom
    return HomogeneityOutcome("Cochran's Q (runs x initial states)", q, r - 1, chi2_sf(q, r - 1))


def chi2_homogeneity(successes: Sequence[int], trials: Sequence[int]) -> HomogeneityOutcome:
    """Chi-square test of equal success rates across runs (no blocking): used when runs did not replay
    the same initial states."""
    table = np.array([[k, n - k] for k, n in zip(successes, trials, strict=True)], dtype=float)
    df = len(successes) - 1
    if table[:, 0].sum() == 0 or table[:, 1].sum() == 0:
        return HomogeneityOutcome("chi-square homogeneity (runs)", 0.0, df, 1.0)
    # Pearson's statistic: sum of (observed - expected)^2 / expected over the runs x {success, failure} table.
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / table.sum()
    stat = float(((table - expected) ** 2 / expected).sum())
    return HomogeneityOutcome("chi-square homogeneity (runs)", stat, df, chi2_sf(stat, df))
