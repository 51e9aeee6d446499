"""Small seeded versions of bench/interval_coverage.py (the full run lives there)."""

from __future__ import annotations

from rlinf_bench.stats.simulation import coverage, power_of_drop


def test_given_heterogeneous_states_then_clustered_interval_covers_and_pooled_wilson_falls_short() -> None:
    res = coverage(seed=11, replicates=600, clusters=50, runs=3, mean=0.8, concentration=2.0)
    # Binomial noise of 600 replicates is ~0.9 points at 95 %: bounds are ~3 standard errors wide.
    assert 0.92 <= res.clustered_coverage <= 0.98
    assert res.wilson_coverage < 0.90
    assert res.clustered_mean_width > res.wilson_mean_width


def test_given_independent_states_then_both_intervals_cover() -> None:
    # Very high concentration: every state has the same rate, so episodes are independent.
    res = coverage(seed=12, replicates=400, clusters=50, runs=3, mean=0.8, concentration=1e6)
    assert res.wilson_coverage >= 0.92 and res.clustered_coverage >= 0.92


def test_given_a_two_point_drop_on_the_same_states_then_pairing_detects_it_more_often() -> None:
    res = power_of_drop(seed=13, replicates=120, drop=0.02, clusters=500)
    assert res.paired_detection > res.unpaired_detection + 0.1
