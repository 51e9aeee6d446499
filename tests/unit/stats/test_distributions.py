"""The pure-Python distribution functions against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rlinf_bench.stats.distributions import chi2_sf, norm_cdf, norm_ppf, t_cdf, t_ppf, t_sf


@pytest.mark.parametrize("df", [1, 2, 3, 5, 10, 49, 499, 4499])
def test_given_student_t_then_cdf_and_quantiles_match_scipy(df: int) -> None:
    xs = np.linspace(-8, 8, 81)
    assert [t_cdf(x, df) for x in xs] == pytest.approx(stats.t.cdf(xs, df), abs=1e-11)
    assert t_sf(2.5, df) == pytest.approx(stats.t.sf(2.5, df), rel=1e-9)
    for p in (0.001, 0.025, 0.3, 0.975, 0.999):
        assert t_ppf(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-9)


@pytest.mark.parametrize("df", [1, 2, 3, 5, 10, 100])
def test_given_chi_square_then_survival_matches_scipy(df: int) -> None:
    xs = np.concatenate([np.linspace(0, 60, 121), [1e-6, 250.0]])
    assert [chi2_sf(x, df) for x in xs] == pytest.approx(stats.chi2.sf(xs, df), abs=1e-13)


def test_given_normal_then_cdf_and_ppf_match_scipy() -> None:
    xs = np.linspace(-9, 9, 91)
    assert [norm_cdf(x) for x in xs] == pytest.approx(stats.norm.cdf(xs), abs=1e-15)
    assert norm_ppf(0.975) == pytest.approx(stats.norm.ppf(0.975), rel=1e-12)
    assert norm_cdf(float("inf")) == 1.0 and t_cdf(float("-inf"), 3) == 0.0


def test_given_invalid_probabilities_then_a_clear_error() -> None:
    with pytest.raises(ValueError, match="0 < p < 1"):
        t_ppf(1.0, 5)
