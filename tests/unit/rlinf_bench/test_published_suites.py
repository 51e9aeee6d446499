"""LIBERO-plus's and LIBERO-PRO's suites in the catalogue: every variant in one published category, with its base
task, readable without the simulator (what the report's per-category table and the control pairing need)."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources

import pytest

from rlinf_bench.contracts.robustness import AXES
from rlinf_bench.errors import UnknownSuiteError
from rlinf_bench.published_suites import (
    LIBERO_PLUS,
    LIBERO_PRO,
    LIBERO_PRO_CATEGORIES,
    base_task_of,
    category_of,
    liberoplus_source,
    published_suite,
    published_suites,
    variants,
)
from rlinf_bench.suites import benchmark_of, get_suite

#: LIBERO-plus's task_classification.json, counted per suite and category (its README: 10,030 tasks).
PLUS_COUNTS = {
    "liberoplus_spatial": {"texture": 258, "robot_init": 350, "camera": 376, "language": 390, "noise": 351,
                           "layout": 385, "light": 292},
    "liberoplus_object": {"texture": 248, "robot_init": 398, "camera": 396, "language": 354, "noise": 422,
                          "layout": 403, "light": 297},
    "liberoplus_goal": {"texture": 281, "robot_init": 409, "camera": 408, "language": 410, "noise": 379,
                        "layout": 425, "light": 279},
    "liberoplus_10": {"texture": 289, "robot_init": 393, "camera": 419, "language": 383, "noise": 449,
                      "layout": 312, "light": 274},
}  # fmt: skip


def test_the_shipped_mapping_puts_each_of_liberoplus_10030_variants_in_one_of_its_seven_categories() -> None:
    counts = {s.name: Counter(v.category for v in variants(s.name)) for s in published_suites(LIBERO_PLUS)}
    assert counts == PLUS_COUNTS
    assert sum(sum(c.values()) for c in counts.values()) == 10_030
    assert {c for per_suite in counts.values() for c in per_suite} == {str(a) for a in AXES}
    assert "4976dc30028e805ff8094b55501d532c48fec182" in liberoplus_source()


def test_the_shipped_mapping_keeps_the_sources_names_ids_and_difficulties() -> None:
    text = resources.files("rlinf_bench.data.robustness").joinpath("liberoplus_categories.json").read_text("utf-8")
    data = json.loads(text)
    assert data["categories"]["Camera Viewpoints"] == "camera" and len(data["categories"]) == 7
    found = variants("liberoplus_spatial")
    # id 1 of the source is task 0; the name is the base task's with the variant's suffix
    assert found[0].name == "pick_up_the_black_bowl_between_the_plate_and_the_ramekin_and_place_it_on_the_plate_table_1"
    assert (found[0].category, found[0].difficulty, found[0].base.task_id) == ("texture", 2, 0)
    assert all(v.name.startswith(v.base.name) and 1 <= (v.difficulty or 0) <= 5 for v in found)
    assert len({v.name for v in found}) == len(found)


def test_given_a_variant_then_category_of_and_base_task_of_name_its_category_and_control_twin() -> None:
    language = next(v for v in variants("liberoplus_goal") if v.category == "language")
    assert category_of("liberoplus_goal", language.task_id) == "language"
    assert category_of("liberoplus_goal", language.name) == "language"  # by name, as a RunResult carries it
    base = base_task_of("liberoplus_goal", language.task_id)
    assert base is not None and base.suite == "libero_goal" and language.name.startswith(base.name + "_language_")
    assert category_of("liberopro_10_position", 3) == "position"
    pro_base = base_task_of("liberopro_10_position", 3)
    assert pro_base is not None and (pro_base.suite, pro_base.task_id) == ("libero_10", 3)


@pytest.mark.parametrize(
    ("suite", "task"),
    [("libero_spatial", 0), ("robotwin", 0), ("liberoplus_spatial", 2402), ("liberopro_goal_task", 10)],
)
def test_given_a_task_of_no_published_variant_then_it_has_no_category(suite: str, task: int) -> None:
    assert category_of(suite, task) is None and base_task_of(suite, task) is None


def test_liberopro_has_a_suite_per_base_suite_and_kind_and_says_which_no_package_ships() -> None:
    pro = published_suites(LIBERO_PRO)
    assert len(pro) == 4 * len(LIBERO_PRO_CATEGORIES)
    unavailable = {s.name: s.unavailable for s in pro if s.unavailable}
    assert set(unavailable) == {f"liberopro_{b}_environment" for b in ("spatial", "object", "goal", "10")} | {
        "liberopro_spatial_position"
    }
    assert all("github.com/Zxy-MLlab/LIBERO-PRO" in why for why in unavailable.values())


def test_the_catalogue_runs_them_as_benchmarks_of_their_own_with_one_trial_per_liberoplus_variant() -> None:
    plus, pro = get_suite("liberoplus_10"), get_suite("liberopro_goal_object")
    assert (plus.n_tasks, plus.init_states, plus.max_steps) == (2519, 1, get_suite("libero_10").max_steps)
    assert (pro.n_tasks, pro.init_states, pro.max_steps) == (10, 50, get_suite("libero_goal").max_steps)
    assert (benchmark_of(plus.name).label, benchmark_of(pro.name).label) == ("LIBERO-plus", "LIBERO-PRO")  # type: ignore[union-attr]
    assert published_suite("libero_goal") is None


def test_given_a_misspelt_published_suite_then_the_error_names_the_suite_meant() -> None:
    with pytest.raises(UnknownSuiteError, match="Did you mean 'liberoplus_spatial'"):
        get_suite("liberoplus_spatail")
    with pytest.raises(UnknownSuiteError, match="liberopro_goal_language"):
        get_suite("liberopro_goal_langauge")
