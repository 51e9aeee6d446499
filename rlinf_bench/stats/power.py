"""The smallest drop a verdict's test could see: minimum detectable effect (MDE) at 80 % power.

Every test behind a verdict rejects "below" when its estimate falls ``q_alpha`` standard errors under
``reference - tolerance``. A true drop of ``delta`` below the reference is caught with power 1 - beta
when ``delta = tolerance + (q_alpha + q_beta) * se`` (the normal-approximation power formula, Cohen
1988, ch. 2; with t quantiles where the test uses t). ``se`` is the test's own standard error, from
the observed per-state variance, so the MDE says what *this* budget could have seen.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rlinf_bench.stats.distributions import norm_ppf, t_ppf

__all__ = ["POWER", "mde_constant", "mde_paired", "mde_two_proportion"]

POWER = 0.8


def _quantiles(alpha: float, df: int | None, power: float) -> float:
    if df is not None and df >= 1:
        return t_ppf(1 - alpha, df) + t_ppf(power, df)
    return norm_ppf(1 - alpha) + norm_ppf(power)


def mde_constant(
    reference: float, tolerance: float, effective_n: float, df: int | None, alpha: float, power: float = POWER
) -> float:
    """MDE of the score test against a published number (SE under the null, clustered n_eff)."""
    # A null at 0 % or 100 % has no binomial variance; one episode's worth keeps the MDE finite.
    edge = 1.0 / (effective_n + 2)
    p0 = min(max(reference - tolerance, edge), 1.0 - edge)
    se = math.sqrt(p0 * (1 - p0) / effective_n)
    return tolerance + _quantiles(alpha, df, power) * se


def mde_paired(
    current: Sequence[float],
    reference: Sequence[float],
    trials: Sequence[int],
    tolerance: float,
    alpha: float,
    power: float = POWER,
) -> float:
    """MDE of the paired t-test over states, from the observed spread of per-state differences.

    When every state moved identically (e.g. 100 % on both sides) the spread is zero but the test could
    not see a small drop either: the binomial variance of each state's fraction (Laplace-smoothed rate,
    both sides) stands in for it, so the MDE stays honest instead of collapsing to the tolerance.
    """
    d = np.asarray(current, dtype=float) - np.asarray(reference, dtype=float)
    c = len(d)
    m = np.asarray(trials, dtype=float)
    pooled = (np.asarray(current) * m + np.asarray(reference) * m + 1) / (2 * m + 2)
    binomial = float(np.mean(2 * pooled * (1 - pooled) / m))
    var = float(d.var(ddof=1)) if c >= 2 else 0.0
    se = math.sqrt(max(var, binomial) / max(c, 1))
    return tolerance + _quantiles(alpha, c - 1 if c >= 2 else None, power) * se


def mde_two_proportion(
    p1: float,
    n1: int,
    deff1: float,
    p2: float,
    n2: int,
    deff2: float,
    tolerance: float,
    alpha: float,
    power: float = POWER,
) -> float:
    """MDE of the design-effect adjusted two-proportion z-test (pooled rate, Laplace-smoothed)."""
    pooled = (p1 * n1 + p2 * n2 + 1) / (n1 + n2 + 2)
    se = math.sqrt(pooled * (1 - pooled) * (deff1 / n1 + deff2 / n2))
    return tolerance + _quantiles(alpha, None, power) * se
