"""Robustness per axis and level: perturbed episodes against their control twins, the paired drop and its
interval, and the per-category table; every number computed by hand (or with scipy) beside the code's."""

from __future__ import annotations

import math

import pytest
from scipy import stats as scipy_stats

from rlinf_bench.contracts import PerturbationAxis, RunResult
from rlinf_bench.errors import ResultsMismatchError
from rlinf_bench.stats.intervals import clustered_interval, paired_difference
from rlinf_bench.stats.robustness import TABLE_COLUMNS, category_order
from tests.unit.stats.perturbedfactory import perturbation, perturbed_run, report_of

CAMERA, LIGHT, LAYOUT = PerturbationAxis.CAMERA, PerturbationAxis.LIGHT, PerturbationAxis.LAYOUT


def two_runs() -> list[RunResult]:
    """One task, four states, two runs; camera level 1 on every state, light level 2 on states 0 and 1."""
    return [
        perturbed_run({0: [1, 1, 1, 0]}, {(CAMERA, 1): {0: [1, 0, 1, 0]}, (LIGHT, 2): {0: [1, 1]}}, run_index=0),
        perturbed_run({0: [1, 1, 0, 0]}, {(CAMERA, 1): {0: [0, 0, 0, 0]}, (LIGHT, 2): {0: [1, 0]}}, run_index=1),
    ]


def test_the_perturbed_rate_sits_beside_its_controls_on_the_same_pairs_and_the_drop_is_their_difference() -> None:
    section = report_of(two_runs()).suites[0].robustness
    assert section is not None
    camera, light = section.levels  # LIBERO-plus's order: camera before light
    # camera: per state (control, perturbed) over 2 runs: (2, 1) (2, 0) (1, 1) (0, 0)
    assert (camera.axis, camera.level, camera.magnitude, camera.unit) == (CAMERA, 1, 5.0, "deg")
    assert (camera.episodes, camera.clusters, camera.successes, camera.control_successes) == (8, 4, 2, 5)
    assert camera.success_rate == pytest.approx(2 / 8) and camera.control_success_rate == pytest.approx(5 / 8)
    assert camera.drop == pytest.approx(3 / 8)
    ci = clustered_interval([1, 0, 1, 0], [2, 2, 2, 2])
    assert (camera.ci95_low, camera.ci95_high) == pytest.approx((ci.low, ci.high))
    # light level 2 is played on states 0 and 1 only: its control is those two states' (4 of 4), not the task's
    assert (light.episodes, light.successes, light.control_successes) == (4, 3, 4)
    assert light.control_success_rate == 1.0 and light.drop == pytest.approx(0.25)


def test_the_drops_interval_is_the_cluster_robust_one_with_t_on_clusters_minus_one_df() -> None:
    # control - perturbed per state: 1, 2, 0, 0 over 2 pairs each; drop 3/8
    d, m = [1, 2, 0, 0], [2, 2, 2, 2]
    resid = sum((x - 3 / 8 * n) ** 2 for x, n in zip(d, m, strict=True))
    se = math.sqrt(4 / 3 * resid / 64)  # C/(C-1) * sum (d_c - drop m_c)^2 / N^2
    q = scipy_stats.t.ppf(0.975, 3)
    camera = report_of(two_runs()).suites[0].robustness.levels[0]  # type: ignore[union-attr]
    assert camera.drop_ci95_low == pytest.approx(3 / 8 - q * se)
    assert camera.drop_ci95_high == 1.0  # 3/8 + q se = 1.14, clipped to a possible difference
    assert camera.p_value == pytest.approx(scipy_stats.t.sf((3 / 8) / se, 3))


def test_when_every_pair_moved_alike_the_interval_keeps_the_binomial_width_instead_of_collapsing() -> None:
    # 5 states, one pair each, every control succeeds and every perturbed episode fails: the observed spread is 0
    out = paired_difference([1] * 5, [0] * 5, [1] * 5)
    p = (1 + 0 + 1) / 4  # Laplace-smoothed rate of each state's two arms
    se = math.sqrt(5 * 2 * p * (1 - p)) / 5
    assert out.estimate == 1.0 and out.se == pytest.approx(se)
    assert out.low == pytest.approx(1 - scipy_stats.t.ppf(0.975, 4) * se) and out.high == 1.0


def test_a_perturbed_episode_whose_twin_is_missing_is_counted_apart_and_left_out() -> None:
    runs = two_runs()
    # run 1 also played camera on state 4, which has no standard episode (the run's controls are states 0-3)
    runs[1] = perturbed_run(
        {0: [1, 1, 0, 0]}, {(CAMERA, 1): {0: [0, 0, 0, 0, 1]}, (LIGHT, 2): {0: [1, 0]}}, run_index=1
    )
    section = report_of(runs).suites[0].robustness
    assert section is not None
    camera = section.levels[0]
    assert camera.episodes == 8 and camera.successes == 2 and camera.unpaired == 1 and section.unpaired == 1
    state4 = next(o for o in section.states if o.axis == CAMERA and o.init_state == 4)
    assert (state4.trials, state4.unpaired, state4.seeds) == (0, 1, [])


def test_runs_that_disagree_on_a_levels_magnitude_are_refused_naming_the_cell() -> None:
    runs = two_runs()
    other = (
        runs[1]
        .tasks[0]
        .perturbed[0]
        .model_copy(update={"perturbation": perturbation(CAMERA, 1).model_copy(update={"magnitude": 9.0})})
    )
    task = runs[1].tasks[0].model_copy(update={"perturbed": [other, *runs[1].tasks[0].perturbed[1:]]})
    runs[1] = runs[1].with_tasks([task])
    with pytest.raises(ResultsMismatchError, match=r"task 0 state 0: camera level 1 is 5 deg in one run and 9 deg"):
        report_of(runs)


def test_the_category_row_is_each_axis_over_its_levels_in_libero_plus_order_with_the_total_over_all() -> None:
    runs = [
        perturbed_run(
            {0: [1, 1], 1: [1, 0]},
            {(LAYOUT, 1): {0: [1, 0], 1: [0, 0]}, (CAMERA, 1): {0: [1, 1]}, (CAMERA, 2): {0: [0, 1], 1: [1]}},
        )
    ]
    section = report_of(runs).suites[0].robustness
    assert section is not None
    assert [(c.category, c.source, c.episodes, c.successes) for c in section.categories] == [
        ("camera", "native", 5, 4),
        ("layout", "native", 4, 1),
    ]
    (total,) = section.totals
    assert (total.category, total.episodes, total.successes, total.success_rate) == (
        "total",
        9,
        5,
        pytest.approx(5 / 9),
    )


def test_a_published_suites_row_counts_its_variants_by_their_published_category() -> None:
    published = {0: "camera", 1: "camera", 2: "light", 3: "swap_objects"}
    runs = [perturbed_run({0: [1, 0], 1: [1, 1], 2: [0, 0], 3: [1, 0]}, {}, suite="libero_spatial")]
    section = report_of(runs, category_of=lambda suite, task: published.get(task)).suites[0].robustness
    assert section is not None and section.levels == []
    assert [(c.category, c.source, c.episodes, c.successes, c.tasks) for c in section.categories] == [
        ("camera", "published", 4, 3, [0, 1]),
        ("light", "published", 2, 0, [2]),
        ("swap_objects", "published", 2, 1, [3]),  # a published suite's own kind comes after the seven
    ]
    assert [(t.source, t.episodes, t.successes) for t in section.totals] == [("published", 8, 4)]


def test_a_suite_without_perturbed_episodes_or_categories_has_no_section() -> None:
    assert report_of([perturbed_run({0: [1, 0]}, {})]).suites[0].robustness is None


def test_the_table_follows_libero_plus_columns() -> None:
    assert [heading for _, heading in TABLE_COLUMNS] == [
        "Camera", "Robot", "Language", "Light", "Background", "Noise", "Layout",
    ]  # fmt: skip
    assert category_order(["layout", "zeta", "camera", "alpha", "noise"]) == [
        "camera",
        "noise",
        "layout",
        "alpha",
        "zeta",
    ]
