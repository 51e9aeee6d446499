"""Wilson and clustered intervals against independently computed values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rlinf_bench.stats import clustered_interval, wilson
from rlinf_bench.stats.intervals import cluster_variance


@pytest.mark.parametrize(("k", "n"), [(0, 10), (5, 10), (10, 10), (147, 150), (1, 500), (433, 500)])
def test_given_counts_then_wilson_matches_scipy(k: int, n: int) -> None:
    ref = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson(k, n) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_given_known_textbook_values_then_wilson_agrees() -> None:
    # 0/10 -> upper bound z^2 / (n + z^2) = 3.8415 / 13.8415
    assert wilson(0, 10) == pytest.approx((0.0, 0.27753), abs=1e-5)
    assert wilson(5, 10) == pytest.approx((0.23659, 0.76341), abs=1e-5)


def test_given_balanced_clusters_then_the_variance_is_that_of_cluster_means() -> None:
    rng = np.random.default_rng(0)
    succ = rng.integers(0, 4, size=50)
    trials = np.full(50, 3)
    fractions = succ / 3
    # Balanced clusters: the ratio estimator is the mean of cluster fractions, so its variance is var/C.
    assert cluster_variance(list(succ), list(trials)) == pytest.approx(fractions.var(ddof=1) / 50, rel=1e-12)


def test_given_independent_singleton_clusters_then_clustered_equals_wilson_with_t_quantile() -> None:
    # One episode per cluster: the design effect is ~1 (floored at 1).
    succ = [1] * 40 + [0] * 10
    est = clustered_interval(succ, [1] * 50)
    assert est.design_effect == pytest.approx(1.0, abs=0.03)
    q = stats.t.ppf(0.975, 49)
    low, high = wilson(40 / est.design_effect, 50 / est.design_effect, z=q)
    assert (est.low, est.high) == pytest.approx((low, high))


def test_given_states_that_always_fail_or_succeed_then_each_state_counts_once() -> None:
    # 30 states always succeed, 20 always fail, over 3 runs: 150 episodes but only 50 independent facts.
    est = clustered_interval([3] * 30 + [0] * 20, [3] * 50)
    assert est.rate == pytest.approx(0.6)
    expected_deff = 3 * 50 / 49  # all-or-nothing clusters: var = p(1-p)/(C-1)
    assert est.design_effect == pytest.approx(expected_deff)
    pooled = wilson(90, 150)
    assert est.high - est.low > pooled[1] - pooled[0]


@pytest.mark.parametrize(("succ", "expect_low", "expect_high_pos"), [([0] * 50, 0.0, True), ([3] * 50, None, True)])
def test_given_0_or_100_percent_then_the_interval_is_not_degenerate(
    succ: list[int], expect_low: float | None, expect_high_pos: bool
) -> None:
    est = clustered_interval(succ, [3] * 50)
    assert est.design_effect == 3.0  # worst case assumed: each state counts once
    assert est.df is None  # assumed, not estimated: normal quantile
    assert est.high > est.low
    if expect_low == 0.0:
        assert (est.low, est.high) == pytest.approx(wilson(0, 50))
    else:
        assert (est.low, est.high) == pytest.approx(wilson(50, 50)) and est.low == pytest.approx(
            50 / (50 + 1.959964**2)
        )


def test_given_empty_input_then_a_clear_error() -> None:
    with pytest.raises(ValueError, match="at least one"):
        clustered_interval([], [])
