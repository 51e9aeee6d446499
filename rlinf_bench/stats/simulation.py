"""Seeded simulations that check the intervals' coverage and the tests' power.

States differ in difficulty: each (task, initial state) has its own success probability drawn from a
Beta distribution, and every run replays the same states. The target is the population rate (the
Beta's mean): what the policy would score on fresh initial states of the same tasks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from rlinf_bench.stats.adaptive import AdaptiveDesign, look
from rlinf_bench.stats.intervals import clustered_interval, wilson
from rlinf_bench.stats.significance import ComparisonOutcome, compare_to_constant, paired_test, two_proportion_test


@dataclass(frozen=True)
class CoverageResult:
    replicates: int
    true_rate: float
    wilson_coverage: float
    clustered_coverage: float
    wilson_mean_width: float
    clustered_mean_width: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def _beta_params(mean: float, concentration: float) -> tuple[float, float]:
    return mean * concentration, (1 - mean) * concentration


def coverage(
    *,
    seed: int,
    replicates: int,
    clusters: int = 50,
    runs: int = 3,
    mean: float = 0.8,
    concentration: float = 2.0,
) -> CoverageResult:
    """Share of replicates whose 95 % interval contains the population rate, for both intervals.

    ``concentration`` (a + b of the Beta) sets heterogeneity: small means states are mostly all-or-nothing.
    """
    rng = np.random.default_rng(seed)
    a, b = _beta_params(mean, concentration)
    hits_w = hits_c = 0
    width_w = width_c = 0.0
    for _ in range(replicates):
        p = rng.beta(a, b, size=clusters)
        succ = rng.binomial(runs, p)
        w = wilson(int(succ.sum()), clusters * runs)
        c = clustered_interval(list(succ), [runs] * clusters)
        hits_w += w[0] <= mean <= w[1]
        hits_c += c.low <= mean <= c.high
        width_w += w[1] - w[0]
        width_c += c.high - c.low
    return CoverageResult(
        replicates, mean, hits_w / replicates, hits_c / replicates, width_w / replicates, width_c / replicates
    )


@dataclass(frozen=True)
class PowerResult:
    replicates: int
    drop: float
    paired_detection: float
    unpaired_detection: float  # two-proportion test with design effects (what verdicts use without pairing)
    naive_detection: float  # two-proportion test treating every episode as independent (for comparison only)

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def power_of_drop(
    *,
    seed: int,
    replicates: int,
    drop: float = 0.02,
    clusters: int = 500,
    runs: int = 3,
    mean: float = 0.9,
    concentration: float = 2.0,
    alpha: float = 0.05,
) -> PowerResult:
    """How often a true ``drop`` between two checkpoints on the same states is called "below"."""
    rng = np.random.default_rng(seed)
    a, b = _beta_params(mean, concentration)
    paired_hits = unpaired_hits = naive_hits = 0
    for _ in range(replicates):
        p_prev = rng.beta(a, b, size=clusters)
        # The same states get uniformly a bit harder: the drop is spread in proportion to each state's rate.
        p_cur = p_prev * (1 - drop / mean)
        s_prev = rng.binomial(runs, p_prev)
        s_cur = rng.binomial(runs, p_cur)
        pt = paired_test(list(s_cur / runs), list(s_prev / runs), 0.0)
        paired_hits += pt.p_below < alpha
        n = clusters * runs
        d_cur = clustered_interval(list(s_cur), [runs] * clusters).design_effect
        d_prev = clustered_interval(list(s_prev), [runs] * clusters).design_effect
        tp = two_proportion_test(int(s_cur.sum()), n, d_cur, int(s_prev.sum()), n, d_prev, 0.0)
        unpaired_hits += tp.p_below < alpha
        naive = two_proportion_test(int(s_cur.sum()), n, 1.0, int(s_prev.sum()), n, 1.0, 0.0)
        naive_hits += naive.p_below < alpha
    return PowerResult(replicates, drop, paired_hits / replicates, unpaired_hits / replicates, naive_hits / replicates)


@dataclass(frozen=True)
class AdaptiveResult:
    """The adaptive budget against the fixed protocol on the same simulated checkpoints."""

    replicates: int
    drop: float
    fixed_rounds: int
    fixed_below_previous: float  # share of replicates called "below" the previous checkpoint
    fixed_below_baseline: float
    adaptive_below_previous: float
    adaptive_below_baseline: float
    adaptive_mean_rounds: float  # rounds (runs over every state) spent, on average
    adaptive_rounds_histogram: dict[int, int]

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _adaptive_verdicts(
    k: int, s_cur: np.ndarray, s_prev: np.ndarray, prev_runs: int, reference: float, tolerance: float
) -> tuple[ComparisonOutcome, ComparisonOutcome]:
    paired = paired_test(list(s_cur / k), list(s_prev / prev_runs), 0.0)
    est = clustered_interval(list(s_cur), [k] * len(s_cur))
    base = compare_to_constant(est.rate, est.effective_n, est.df, reference, tolerance, clusters=est.clusters)
    return paired, base


def adaptive_vs_fixed(
    *,
    seed: int,
    replicates: int,
    drop: float = 0.0,
    clusters: int = 500,
    mean: float = 0.9,
    concentration: float = 2.0,
    design: AdaptiveDesign | None = None,
    fixed_rounds: int = 3,
    reference_rounds: int = 3,
    tolerance: float = 0.02,
) -> AdaptiveResult:
    """Simulate both budgets on the same checkpoints.

    The previous checkpoint was evaluated with ``reference_rounds`` runs per state (its history); the
    baseline is its population rate (``mean``) with ``tolerance``. The current checkpoint's states are
    ``drop`` harder (spread in proportion to each state's rate). The fixed design runs ``fixed_rounds``
    and tests at alpha; the adaptive one looks after every round with ``design``'s boundaries.
    """
    design = design or AdaptiveDesign()
    rng = np.random.default_rng(seed)
    a, b = _beta_params(mean, concentration)
    fixed_prev = fixed_base = ad_prev = ad_base = 0
    rounds: dict[int, int] = {}
    for _ in range(replicates):
        p_prev = rng.beta(a, b, size=clusters)
        p_cur = p_prev * (1 - drop / mean)
        s_prev = rng.binomial(reference_rounds, p_prev)
        draws = rng.random((design.max_rounds, clusters)) < p_cur  # round x state outcomes of the current one
        cum = np.cumsum(draws, axis=0)
        paired, base = _adaptive_verdicts(
            fixed_rounds, cum[fixed_rounds - 1], s_prev, reference_rounds, mean, tolerance
        )
        fixed_prev += paired.p_below < design.alpha
        fixed_base += base.p_below < design.alpha
        for k in range(1, design.max_rounds + 1):
            paired, base = _adaptive_verdicts(k, cum[k - 1], s_prev, reference_rounds, mean, tolerance)
            lp = look(design, k, paired.p_below, paired.p_above)
            lb = look(design, k, base.p_below, base.p_above)
            if design.stop([lp, lb]):
                ad_prev += lp.value == "below"
                ad_base += lb.value == "below"
                rounds[k] = rounds.get(k, 0) + 1
                break
    n = replicates
    mean_rounds = sum(k * c for k, c in rounds.items()) / n
    return AdaptiveResult(
        n,
        drop,
        fixed_rounds,
        fixed_prev / n,
        fixed_base / n,
        ad_prev / n,
        ad_base / n,
        mean_rounds,
        dict(sorted(rounds.items())),
    )
