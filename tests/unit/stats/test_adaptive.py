"""The adaptive budget: alpha-spending boundaries, look decisions, and error rates in a small simulation
(the full simulation is bench/adaptive_budget.py)."""

from __future__ import annotations

import pytest

from rlinf_bench.stats.adaptive import AdaptiveDesign, efficacy_boundaries, look, obf_spending
from rlinf_bench.stats.simulation import adaptive_vs_fixed


def test_boundaries_match_published_lan_demets_obrien_fleming_values() -> None:
    # gsDesign::gsDesign(k=3, test.type=1, alpha=0.025, sfu=sfLDOF)$upper$bound: 3.7103 2.5114 1.9930
    assert efficacy_boundaries(3, 0.025) == pytest.approx((3.7103, 2.5114, 1.9930), abs=5e-4)
    assert efficacy_boundaries(1, 0.05) == pytest.approx((1.6449,), abs=5e-4)  # one look: the fixed test


def test_spending_reaches_alpha_at_the_last_look_and_spends_little_early() -> None:
    assert obf_spending(1.0, 0.05) == pytest.approx(0.05)
    assert obf_spending(1 / 6, 0.05) < 1e-5 and obf_spending(0.0, 0.05) == 0.0
    bounds = efficacy_boundaries(6, 0.05)
    assert list(bounds) == sorted(bounds, reverse=True) and bounds[-1] > 1.6449


def test_a_look_rejects_past_the_boundary_and_waits_when_borderline() -> None:
    design = AdaptiveDesign()
    assert look(design, 2, 1e-6, 1.0).value == "below"  # z = 4.75 > 3.20
    borderline = look(design, 3, 0.02, 0.98)  # z = 2.05: would be "below" at a fixed alpha, not at look 3 of 6
    assert borderline.value == "open" and borderline.below == "open"
    assert look(design, 6, 0.02, 0.98).value == "below"  # the last boundary is 1.76
    assert look(design, 6, 0.2, 0.8).value == "within"  # never decided: within at the end
    assert look(design, 1, 0.5, 0.5).decided  # no trend either way: both sides futile at once
    assert not look(design, 1, 0.9, 0.1).decided  # a trend towards "above" keeps that side open


def test_the_stopping_rule_extends_past_3_rounds_only_for_a_borderline_drop() -> None:
    design = AdaptiveDesign()
    open_above = look(design, 3, 0.9, 0.06)
    assert open_above.below == "futile" and open_above.above == "open"
    assert design.stop([open_above])  # an open "above" side does not buy rounds 4-6
    assert not design.stop([look(design, 3, 0.03, 0.97)])
    assert not design.stop([look(design, 2, 0.9, 0.06)])  # before the brief's 3 rounds it does
    with pytest.raises(ValueError, match="min_rounds"):
        AdaptiveDesign(planned_rounds=7)


def test_given_no_drop_then_few_false_alarms_and_no_more_rounds_than_the_fixed_design() -> None:
    res = adaptive_vs_fixed(seed=3, replicates=150, drop=0.0, clusters=200)
    assert res.adaptive_below_previous <= 0.08  # alpha 0.05; 150 replicates: binomial SE 0.018
    assert res.adaptive_mean_rounds <= 3.0
    assert sum(res.adaptive_rounds_histogram.values()) == 150


def test_given_a_large_drop_then_it_is_caught_early() -> None:
    res = adaptive_vs_fixed(seed=4, replicates=100, drop=0.15, clusters=200)
    assert res.adaptive_below_previous >= 0.95 and res.fixed_below_previous >= 0.95
    assert res.adaptive_mean_rounds < 2.5
