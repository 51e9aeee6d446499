"""The layout axis's draws that need no simulator: places inside the BDDL regions, and the distractors drawn
and written into the task's BDDL file."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from eval_runner.perturbations.distractors import (
    REGION,
    DistractorSet,
    distractor_area,
    distractor_bddl,
    draw_distractors,
)
from eval_runner.perturbations.draw import AxisLevel, scene_generator
from eval_runner.perturbations.physical import _drawn_offset, layout_regions
from rlinf_bench.contracts import PerturbationAxis
from rlinf_bench.suites import get_suite

GROCERIES = ["alphabet_soup", "bbq_sauce", "butter", "cookies", "ketchup", "milk", "orange_juice"]


def _problem() -> dict[str, Any]:
    """libero_spatial task 0's parsed problem, in the parts the layout reads (as LIBERO's parser gives it)."""
    return {
        "regions": {
            "main_table_plate_region": {"target": "main_table", "ranges": [[0.05, 0.19, 0.07, 0.21]]},
            "main_table_box_region": {"target": "main_table", "ranges": [[0.06, 0.02, 0.08, 0.04]]},
            "main_table_stove_region": {"target": "main_table", "ranges": [[-0.42, -0.15, -0.4, -0.13]]},
            "wooden_cabinet_1_top_side": {"target": "wooden_cabinet_1", "ranges": []},
        },
        "objects": {"plate": ["plate_1"], "cookies": ["cookies_1"], "akita_black_bowl": ["akita_black_bowl_1"]},
        "initial_state": [
            ["on", "plate_1", "main_table_plate_region"],
            ["on", "cookies_1", "main_table_box_region"],
            ["on", "akita_black_bowl_1", "wooden_cabinet_1_top_side"],
            ["on", "flat_stove_1", "main_table_stove_region"],
        ],
    }


def test_given_objects_in_workspace_regions_then_each_gets_its_region_in_the_world_and_others_none() -> None:
    env = SimpleNamespace(
        parsed_problem=_problem(), objects_dict={"plate_1": 0, "cookies_1": 0}, workspace_offset=(0.1, -0.2, 0.9)
    )
    regions = layout_regions(env, {"plate_1": ["plate_1"], "cookies_1": ["cookies_1"], "akita_black_bowl_1": []})

    assert regions.keys() == {"plate_1", "cookies_1"}  # the bowl stands on the cabinet: no workspace region
    assert regions["plate_1"] == pytest.approx((0.15, -0.01, 0.17, 0.01))


@pytest.mark.parametrize("distance", [0.03, 0.1])
def test_given_a_region_then_every_drawn_place_is_inside_it_grown_by_the_magnitude(distance: float) -> None:
    rng = np.random.default_rng(0)
    box = (0.05, 0.19, 0.07, 0.21)
    at = np.array([0.06, 0.2, 0.9])
    places = np.array([at[:2] + _drawn_offset(rng, distance, box, at) for _ in range(500)])

    assert np.all(places >= np.array(box[:2]) - distance) and np.all(places <= np.array(box[2:]) + distance)
    assert np.ptp(places[:, 0]) > 0.02 + 1.5 * distance  # spread over the grown box, not stuck in the region
    free = np.array([_drawn_offset(rng, distance, None, at) for _ in range(50)])  # no region: the magnitude
    assert np.allclose(np.linalg.norm(free, axis=1), distance)


def test_given_a_task_and_level_then_the_distractors_are_groceries_not_in_the_scene_drawn_from_the_key() -> None:
    def drawn(seed: int = 0, level: int = 3) -> DistractorSet:
        rng = scene_generator(seed, "libero_spatial", 0, AxisLevel(PerturbationAxis.LAYOUT, level))
        return draw_distractors(rng, GROCERIES, {"cookies", "plate"}, level)

    first = drawn()
    assert drawn() == first and len(set(first.categories)) == 3 and "cookies" not in first.categories
    assert first.names == tuple(f"{category}_1" for category in first.categories)
    assert {drawn(seed=s) for s in range(8)} != {first}  # another run seed draws others
    with pytest.raises(ValueError, match="3 distractors asked for, 2 grocery categories"):
        draw_distractors(np.random.default_rng(0), ["milk", "cookies", "butter"], {"cookies"}, 3)


def test_given_the_objects_regions_then_the_distractor_area_covers_them_and_is_at_least_30_cm() -> None:
    x0, y0, x1, y1 = distractor_area(_problem(), "main_table")

    # plate and box regions (the stove is a fixture, the bowl is on the cabinet): 2 x 19 cm, grown to 30 cm
    assert (x1 - x0, y1 - y0) == pytest.approx((0.3, 0.3))
    assert x0 <= 0.05 and x1 >= 0.08 and y0 <= 0.02 and y1 >= 0.21


def test_given_a_libero_bddl_file_then_the_distractors_are_added_as_objects_on_their_region() -> None:
    text = get_suite("libero_spatial").task(0).bddl_file.read_text()
    extra = DistractorSet(("ketchup", "milk"))

    out = distractor_bddl(text, "main_table", extra)

    assert out.startswith(text[: text.index("(:regions")])
    assert re.search(
        rf"\({REGION}\s+\(:target main_table\)\s+\(:ranges \(\s+\(-0\.3\d* -0\.3\d* 0\.3\d* 0\.3\d*\)", out
    )
    objects = out[out.index("(:objects") : out.index("(:obj_of_interest")]
    assert "ketchup_1 - ketchup" in objects and "milk_1 - milk" in objects and "plate_1 - plate" in objects
    init = out[out.index("(:init") : out.index("(:goal")]
    assert f"(On ketchup_1 main_table_{REGION})" in init and "(On plate_1 main_table_plate_region)" in init
    assert out.count("(") - out.count(")") == text.count("(") - text.count(")") == 0
    with pytest.raises(ValueError, match=r"no \(:init"):
        distractor_bddl(text.replace("(:init", "(:start"), "main_table", extra)
