"""A published robustness suite's report reads its categories from the catalogue: each task's row is its variant's
published category (LIBERO-plus's seven, LIBERO-PRO's kinds) with no category function passed in."""

from __future__ import annotations

from tests.unit.stats.perturbedfactory import perturbed_run, report_of


def test_given_liberoplus_variants_then_the_per_category_rows_follow_its_mapping() -> None:
    # liberoplus_spatial: task 0 a background texture, 608 a camera viewpoint, 2110 a light condition
    runs = [perturbed_run({0: [0], 608: [1], 2110: [1]}, {}, suite="liberoplus_spatial")]
    section = report_of(runs).suites[0].robustness
    assert section is not None
    assert [(c.category, c.source, c.episodes, c.successes, c.tasks) for c in section.categories] == [
        ("camera", "published", 1, 1, [608]),
        ("light", "published", 1, 1, [2110]),
        ("texture", "published", 1, 0, [0]),
    ]


def test_given_a_liberopro_suite_then_every_task_is_its_kind() -> None:
    runs = [perturbed_run({0: [1, 0], 3: [0, 0]}, {}, suite="liberopro_goal_language")]
    section = report_of(runs).suites[0].robustness
    assert section is not None
    assert [(c.category, c.episodes, c.successes, c.tasks) for c in section.categories] == [("language", 4, 1, [0, 3])]


def test_a_libero_suite_has_no_published_categories() -> None:
    assert report_of([perturbed_run({0: [1, 0]}, {})]).suites[0].robustness is None
