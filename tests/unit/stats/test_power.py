"""The minimum detectable drop (MDE) each verdict states, checked against simulated power."""

from __future__ import annotations

import numpy as np
import pytest

from rlinf_bench.stats.intervals import ClusteredEstimate, clustered_interval
from rlinf_bench.stats.power import mde_constant, mde_paired
from rlinf_bench.stats.significance import compare_to_constant, paired_test

ALPHA = 0.05
RUNS = 3
REPS = 300


def _fractions(rng: np.random.Generator, rates: np.ndarray) -> list[float]:
    return list(rng.binomial(RUNS, rates) / RUNS)


def test_given_the_paired_mde_as_the_true_drop_then_the_paired_test_catches_it_about_80_percent_of_the_time() -> None:
    rng = np.random.default_rng(11)
    rates = rng.uniform(0.3, 0.9, size=500)  # 10 tasks x 50 states, away from 0/1 so a shift stays a shift
    observed = mde_paired(_fractions(rng, rates), _fractions(rng, rates), [RUNS] * 500, 0.0, ALPHA)
    assert 0.02 < observed < 0.08  # a few points at 3 x 500 episodes, as docs/statistics.md says
    caught = 0
    for _ in range(REPS):
        before, now = _fractions(rng, rates), _fractions(rng, rates - observed)
        caught += paired_test(now, before, 0.0).p_below < ALPHA
    assert caught / REPS == pytest.approx(0.8, abs=0.1)
    # Half the MDE is caught far less often: the figure is a real threshold, not a label.
    half = sum(
        paired_test(_fractions(rng, rates - observed / 2), _fractions(rng, rates), 0.0).p_below < ALPHA
        for _ in range(REPS)
    )
    assert half / REPS < 0.5


def test_given_the_baseline_mde_as_the_true_drop_then_the_score_test_catches_it_about_80_percent_of_the_time() -> None:
    rng = np.random.default_rng(12)
    base = rng.beta(4, 1, size=500)
    reference, tolerance = float(base.mean()), 0.02

    def estimate(rates: np.ndarray) -> ClusteredEstimate:
        k = rng.binomial(RUNS, rates)
        return clustered_interval(list(k), [RUNS] * len(k))

    est = estimate(base)
    mde = mde_constant(reference, tolerance, est.effective_n, est.df, ALPHA)
    assert tolerance < mde < tolerance + 0.1
    shifted = base * (1 - mde / reference)  # mean drops by exactly the MDE, rates stay in [0, 1]
    caught = 0
    for _ in range(REPS):
        e = estimate(shifted)
        caught += compare_to_constant(e.rate, e.effective_n, e.df, reference, tolerance).p_below < ALPHA
    assert caught / REPS == pytest.approx(0.8, abs=0.12)


def test_given_identical_outcomes_then_the_paired_mde_does_not_collapse_to_the_tolerance() -> None:
    ones = [1.0] * 50
    assert mde_paired(ones, ones, [RUNS] * 50, 0.0, ALPHA) > 0.02


def test_a_larger_budget_sees_a_smaller_drop() -> None:
    small = mde_constant(0.9, 0.02, 150, 49, ALPHA)
    large = mde_constant(0.9, 0.02, 1500, 499, ALPHA)
    assert large < small
