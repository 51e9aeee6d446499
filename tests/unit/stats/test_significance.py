"""Test statistics against scipy and hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from rlinf_bench.stats import chi2_homogeneity, cochran_q, compare_to_constant, paired_test, two_proportion_test


def test_given_paired_fractions_then_paired_test_matches_scipy_ttest() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(0, 4, 50) / 3
    b = np.clip(a + rng.choice([-1 / 3, 0, 0, 1 / 3], 50), 0, 1)
    out = paired_test(list(a), list(b), tolerance=0.02)
    ref_below = stats.ttest_1samp(a - b + 0.02, 0.0, alternative="less")
    ref_above = stats.ttest_rel(a, b, alternative="greater")
    assert out.statistic == pytest.approx(ref_below.statistic)
    assert out.p_below == pytest.approx(ref_below.pvalue)
    assert out.p_above == pytest.approx(ref_above.pvalue)


def test_given_identical_evaluations_then_paired_test_is_neutral() -> None:
    out = paired_test([1.0, 0.0, 2 / 3], [1.0, 0.0, 2 / 3], tolerance=0.0)
    assert (out.p_below, out.p_above) == (0.5, 0.5)


def test_given_a_uniform_collapse_then_paired_test_says_below_with_certainty() -> None:
    out = paired_test([0.0] * 10, [1.0] * 10, tolerance=0.05)
    assert out.p_below == 0.0 and out.p_above == 1.0


def test_given_unclustered_counts_then_two_proportion_matches_chi_square() -> None:
    # With no tolerance and design effect 1, z^2 is Pearson's chi-square of the 2x2 table.
    out = two_proportion_test(140, 150, 1.0, 120, 150, 1.0, tolerance=0.0)
    chi2 = stats.chi2_contingency([[140, 10], [120, 30]], correction=False)
    assert out.statistic**2 == pytest.approx(chi2.statistic)
    assert out.p_above == pytest.approx(chi2.pvalue / 2)


def test_given_design_effects_then_two_proportion_is_less_sure() -> None:
    plain = two_proportion_test(140, 150, 1.0, 120, 150, 1.0, tolerance=0.0)
    clustered = two_proportion_test(140, 150, 3.0, 120, 150, 3.0, tolerance=0.0)
    assert clustered.statistic == pytest.approx(plain.statistic / math.sqrt(3))
    assert clustered.p_above > plain.p_above


def test_given_a_constant_then_the_score_test_uses_the_null_variance() -> None:
    out = compare_to_constant(0.90, 100.0, 49, reference=0.95, tolerance=0.02)
    p0 = 0.93
    z = (0.90 - p0) / math.sqrt(p0 * (1 - p0) / 100)
    assert out.statistic == pytest.approx(z)
    assert out.p_below == pytest.approx(stats.t.cdf(z, 49))


def test_given_a_baseline_of_100_then_one_failure_is_decisive_only_with_zero_tolerance() -> None:
    exact = compare_to_constant(0.99, 150.0, 49, reference=1.0, tolerance=0.0)
    assert exact.p_below == 0.0 and exact.p_above == 1.0
    perfect = compare_to_constant(1.0, 50.0, None, reference=1.0, tolerance=0.0)
    assert perfect.p_below == 1.0 and perfect.p_above == 1.0


def test_given_runs_on_two_conditions_then_cochran_q_equals_mcnemar() -> None:
    rng = np.random.default_rng(2)
    x = (rng.random((200, 2)) < [0.6, 0.75]).astype(int)
    b = int(((x[:, 0] == 1) & (x[:, 1] == 0)).sum())
    c = int(((x[:, 0] == 0) & (x[:, 1] == 1)).sum())
    out = cochran_q(x)
    assert out.statistic == pytest.approx((b - c) ** 2 / (b + c))
    assert out.p_value == pytest.approx(stats.chi2.sf((b - c) ** 2 / (b + c), 1))


def test_given_a_textbook_table_then_cochran_q_is_known() -> None:
    # 3 treatments x 6 blocks; hand computation: col totals (5, 2, 1), row totals (3, 1, 2, 1, 0, 1)
    x = np.array([[1, 1, 1], [1, 0, 0], [1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 0, 0]])
    # Q = (k-1)(k*sum(C^2) - N^2) / (k*N - sum(R^2)) = 2*(3*30 - 64) / (24 - 16) = 6.5
    assert cochran_q(x).statistic == pytest.approx(6.5)


def test_given_runs_that_agree_everywhere_then_no_disagreement() -> None:
    x = np.repeat(np.array([[1], [0], [1]]), 3, axis=1)
    assert cochran_q(x).p_value == 1.0


def test_given_unpaired_runs_then_chi2_matches_scipy() -> None:
    out = chi2_homogeneity([40, 45, 25], [50, 50, 50])
    ref = stats.chi2_contingency([[40, 10], [45, 5], [25, 25]], correction=False)
    assert out.statistic == pytest.approx(ref.statistic) and out.p_value == pytest.approx(ref.pvalue)


def test_given_an_assumed_design_effect_then_the_score_test_is_normal() -> None:
    out = compare_to_constant(0.0, 2.0, None, reference=0.916, tolerance=0.02)
    z = (0.0 - 0.896) / math.sqrt(0.896 * 0.104 / 2)
    assert out.statistic == pytest.approx(z) and out.p_below == pytest.approx(stats.norm.cdf(z))
    assert "normal" in out.test


def test_given_one_cluster_then_a_flip_is_not_decisive_either_way() -> None:
    out = paired_test([1.0], [0.0], tolerance=0.05)
    assert (out.p_below, out.p_above) == (1.0, 1.0) and out.units == 1
