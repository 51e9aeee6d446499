"""Confidence intervals for success rates: pooled Wilson and the clustered (design-effect) Wilson.

Why clustered: the runs of a suite replay the same initial states, and a hard state fails in every run,
so 3 x 50 episodes of a task carry less information than 150 independent coin flips. The clustered
interval treats the (task, initial state) cluster as the unit. docs/statistics.md has the derivation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rlinf_bench.stats.distributions import norm_cdf, norm_ppf, t_cdf, t_ppf

Z95 = norm_ppf(0.975)
CLUSTERED_METHOD = "wilson-design-effect (clusters = task x initial state, t quantile with C-1 df)"


def wilson(successes: float, n: float, *, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion; ``n`` may be fractional (an effective sample size).

    Unlike the normal (Wald) interval it stays inside [0, 1] and keeps a positive width at 0 % and 100 %.
    """
    if n <= 0:
        raise ValueError(f"Wilson interval needs n > 0, got {n}")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0))
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class ClusteredEstimate:
    """A success rate whose episodes come in clusters, with its design-effect-adjusted interval."""

    rate: float
    successes: int
    episodes: int
    clusters: int
    design_effect: float
    effective_n: float
    df: int | None  # degrees of freedom of the t quantile; None = normal (variance assumed, not estimated)
    quantile: float
    low: float
    high: float


def cluster_variance(successes: Sequence[int], trials: Sequence[int]) -> float:
    """Cluster-robust (linearized ratio-estimator) variance of sum(successes)/sum(trials)."""
    c = len(successes)
    total = sum(trials)
    if c < 2 or total == 0:
        return 0.0
    rate = sum(successes) / total
    resid = sum((s - rate * m) ** 2 for s, m in zip(successes, trials, strict=True))
    return c / (c - 1) * resid / (total * total)


def clustered_interval(successes: Sequence[int], trials: Sequence[int], *, level: float = 0.95) -> ClusteredEstimate:
    """Wilson interval on the design-effect-adjusted effective sample size.

    design effect = cluster-robust variance / binomial variance, floored at 1 so the result is never
    narrower than the pooled Wilson interval. At 0 % or 100 % the within-cluster correlation cannot be
    estimated, so the worst case is assumed (design effect = mean cluster size: each cluster counts
    once). When the design effect is estimated, the quantile comes from Student's t with C - 1
    degrees of freedom, which widens the interval when there are few clusters (a smoke test with
    2 tasks x 3 states); when it is assumed there is no estimation error to pay for, so it is normal.
    """
    if len(successes) != len(trials) or not trials:
        raise ValueError("clustered_interval needs one (successes, trials) pair per cluster, at least one")
    n = sum(trials)
    k = sum(successes)
    c = len(trials)
    if n <= 0:
        raise ValueError("clustered_interval needs at least one episode")
    rate = k / n
    binomial_var = rate * (1 - rate) / n
    if binomial_var == 0:
        deff, df = n / c, None
    else:
        deff = max(1.0, cluster_variance(successes, trials) / binomial_var)
        df = c - 1 if c >= 2 else None
    q = t_ppf(0.5 + level / 2, df) if df is not None else norm_ppf(0.5 + level / 2)
    n_eff = n / deff
    low, high = wilson(rate * n_eff, n_eff, z=q)
    return ClusteredEstimate(rate, k, n, c, deff, n_eff, df, q, low, high)


@dataclass(frozen=True)
class PairedDifference:
    """The difference of two success rates measured on the same clusters (each episode with its twin), with
    its cluster-robust interval and a one-sided p for "the difference is above 0"."""

    estimate: float  # sum(a) / sum(n) - sum(b) / sum(n)
    se: float
    df: int | None
    low: float
    high: float
    p_positive: float  # one-sided: evidence that a succeeds more often than b
    clusters: int
    episodes: int


def paired_difference(
    a_successes: Sequence[int], b_successes: Sequence[int], trials: Sequence[int], *, level: float = 0.95
) -> PairedDifference:
    """Rate of ``a`` minus rate of ``b`` over clusters of twins (``trials[c]`` pairs in cluster ``c``).

    The estimate is the pooled difference (K_a - K_b) / N; its variance is the linearized ratio estimator's
    over clusters (:func:`cluster_variance` of the per-cluster differences), which with equal cluster sizes is
    the paired t-test's sd(d)/sqrt(C). When the clusters all moved alike (both 100 %, or one cluster) that
    variance is 0 although the budget could not see a small difference: the binomial variance of each
    cluster's two arms (Laplace-smoothed) stands in, as for the paired verdicts' MDE, so the interval never
    collapses to a point. t quantile with C - 1 df (normal with one cluster).
    """
    if not (len(a_successes) == len(b_successes) == len(trials)) or not trials:
        raise ValueError("paired_difference needs one (a, b, trials) triple per cluster, at least one")
    n = sum(trials)
    if n <= 0:
        raise ValueError("paired_difference needs at least one pair")
    c = len(trials)
    diffs = [a - b for a, b in zip(a_successes, b_successes, strict=True)]
    estimate = sum(diffs) / n
    robust = cluster_variance(diffs, trials) if c >= 2 else 0.0
    floor = 0.0
    for a, b, m in zip(a_successes, b_successes, trials, strict=True):
        p = (a + b + 1) / (2 * m + 2)
        floor += m * 2 * p * (1 - p)
    se = math.sqrt(max(robust, floor / (n * n)))
    df = c - 1 if c >= 2 else None
    q = t_ppf(0.5 + level / 2, df) if df is not None else norm_ppf(0.5 + level / 2)
    z = estimate / se
    p_positive = 1.0 - (t_cdf(z, df) if df is not None else norm_cdf(z))
    low, high = max(-1.0, estimate - q * se), min(1.0, estimate + q * se)
    return PairedDifference(estimate, se, df, low, high, p_positive, c, n)
