"""The scripted expert's phases and grasp choice, on hand-made scenes (no simulator)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pytest

from eval_runner.expert_state import STATE_DIM
from eval_runner.policies.expert import orientation_error, quat_matrix
from eval_runner.policies.expert_plan import (
    IN_CLEARANCE,
    MAX_TRIES,
    PHASES,
    Episode,
    Grasp,
    Scene,
    choose_grasp,
    hand_collision,
    plan_step,
)
from rlinf_bench.errors import PolicyError

Box = Sequence[float]
# LIBERO-Object's cream cheese (a flat box, 8.1 x 4.3 x 1.8 cm) and its basket, whose rim stands 14 cm high
CHEESE = (0.005, -0.124, 0.0, 0.087, -0.081, 0.018)
BASKET_REGION = (-0.07, 0.207, -0.003, 0.052, 0.328, 0.141)
# a soup can 2 cm past the cheese's +x end, beside where a centred hand would come down
CAN = (0.069, -0.234, 0.0, 0.132, -0.172, 0.076)


def scene(
    obj: Box = CHEESE, target: Box = BASKET_REGION, *, inside: bool = True, obstacles: Sequence[Box] = ()
) -> Scene:
    row = np.zeros(STATE_DIM)
    row[0:6], row[6:12], row[12], row[13] = obj, target, float(inside), len(obstacles)
    for i, box in enumerate(obstacles):
        row[14 + 6 * i : 20 + 6 * i] = box
    return Scene.parse(row)


def test_given_nothing_around_then_the_object_is_grasped_in_its_middle_without_turning() -> None:
    assert choose_grasp(scene()) == Grasp()
    point = Grasp().point(scene())
    assert point[:2] == pytest.approx([0.046, -0.1025]) and point[2] == pytest.approx(0.009)


def test_given_a_taller_neighbour_under_the_centred_hand_then_the_grasp_moves_along_the_object_off_it() -> None:
    crowded = scene(obstacles=[CAN])
    assert hand_collision(crowded, Grasp()) > 0.03  # the palm would come down on the can
    chosen = choose_grasp(crowded)
    assert hand_collision(crowded, chosen) == 0.0
    assert chosen.yaw == 0.0 and chosen.along < 0  # away from the can, still across the box's 4.3 cm


def test_given_an_object_too_wide_across_the_fingers_but_not_along_them_then_the_hand_turns() -> None:
    turned = (0.0, 0.0, 0.0, 0.043, 0.081, 0.018)  # the cheese box lying the other way
    assert choose_grasp(scene(turned)).yaw == pytest.approx(np.pi / 2)


def test_given_an_object_wider_than_the_gripper_both_ways_then_it_is_held_by_its_rim() -> None:
    bowl = (-0.117, 0.148, 0.9, -0.01, 0.255, 0.951)
    grasp = choose_grasp(scene(bowl))
    assert grasp.rim and grasp.point(scene(bowl))[1] == pytest.approx(0.255 - 0.012)


def _run(
    ep: Episode, world: Scene, eef: np.ndarray, steps: int, *, grips: bool = True
) -> list[tuple[str, np.ndarray, float]]:
    """Step the plan in a toy world: the arm moves to each target (at most 5 cm a step, as OSC does), the
    object moves with the closed hand once grasped (unless the fingers miss it) and stays where it is let go."""
    seen = []
    lo, hi = world.obj_lo.copy(), world.obj_hi.copy()
    held = False
    for _ in range(steps):
        now = Scene(lo.copy(), hi.copy(), world.tgt_lo, world.tgt_hi, world.inside, world.obstacles)
        target, grip = plan_step(ep, eef, now)
        seen.append((ep.phase, target, grip))
        move = np.clip(target - eef, -0.05, 0.05)
        held = grip > 0 and grips and (held or ep.phase == "lift")
        if held:
            lo, hi = lo + move, hi + move
        eef = eef + move
    return seen


def test_given_an_in_goal_then_the_object_is_carried_over_the_rim_and_lowered_into_the_container() -> None:
    ep = Episode(np.random.default_rng(0))
    world = scene()
    trace = _run(ep, world, np.array([-0.14, 0.0, 0.27]), steps=120)
    phases = [p for p, _, _ in trace]
    assert phases.index("carry") > phases.index("lift") > phases.index("grasp") > phases.index("descend")
    hang = 0.009  # the grasp point above the object's bottom
    carry = [t for p, t, _ in trace if p == "carry"]
    assert min(t[2] for t in carry) - hang > BASKET_REGION[5]  # the object's bottom clears the rim
    place = [t for p, t, _ in trace if p == "place"]
    assert place[-1][2] == pytest.approx(BASKET_REGION[2] + IN_CLEARANCE + hang + 0.005)
    assert phases[-1] == "retreat" and trace[-1][2] < 0  # let go, and away
    assert place[-1][:2] == pytest.approx([(BASKET_REGION[0] + BASKET_REGION[3]) / 2, 0.2675], abs=1e-6)


def test_given_an_on_goal_then_the_object_is_set_on_the_targets_top() -> None:
    plate = (-0.016, 0.137, 0.0, 0.122, 0.275, 0.019)
    ep = Episode(np.random.default_rng(0))
    trace = _run(ep, scene(target=plate, inside=False), np.array([-0.14, 0.0, 0.27]), steps=120)
    place = [t for p, t, _ in trace if p == "place"]
    assert place[-1][2] == pytest.approx(plate[5] + 0.009 + 0.005)


def test_given_an_object_that_stays_behind_when_lifted_then_it_grasps_again_a_bounded_number_of_times() -> None:
    ep = Episode(np.random.default_rng(0))
    trace = _run(ep, scene(), np.array([-0.14, 0.0, 0.27]), steps=400, grips=False)
    phases = [p for p, _, _ in trace]
    regrasps = sum(1 for a, b in itertools.pairwise(phases) if a == "lift" and b == "reach")
    assert regrasps == MAX_TRIES - 1 == ep.tries - 1
    assert set(phases) <= set(PHASES) and phases[-1] == "retreat"  # the last try carries on: the episode ends


def test_given_a_state_row_of_the_wrong_length_then_the_error_names_the_expected_shape() -> None:
    with pytest.raises(PolicyError, match=rf"expected \({STATE_DIM},\)"):
        Scene.parse(np.zeros(12))


def test_given_a_quarter_turn_about_z_then_the_orientation_error_is_a_unit_turn_about_z() -> None:
    down = quat_matrix(np.array([1.0, 0.0, 0.0, 0.0]))  # the gripper pointing down (180 degrees about x)
    turn = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    assert orientation_error(turn @ down, down) == pytest.approx([0.0, 0.0, 1.0])
    assert orientation_error(down, down) == pytest.approx([0.0, 0.0, 0.0])
