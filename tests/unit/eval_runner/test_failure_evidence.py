"""Why an episode failed, from a tracker's evidence: each reason on a synthetic trace of what the simulator showed,
the order in which they are checked, and what an episode's result records (none on success, error on an error)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from eval_runner.envs.libero_failures import LiberoFailureTracker
from eval_runner.failure_reasons import (
    DETAIL_CHARS,
    FALL_M,
    Displacement,
    Evidence,
    FailureCause,
    ItemTrack,
    OtherGrasp,
    Predicate,
    PredicateTrack,
    Release,
    decide,
    episode_failure,
)
from rlinf_bench.contracts import EpisodeResult, FailureReason

BOWL_ON_PLATE = Predicate.parse(["On", "akita_black_bowl_1", "plate_1"])
OPEN_DRAWER = Predicate.parse(["Open", "wooden_cabinet_1_top_region"])


def _carry(
    *,
    reached: int | None = 40,
    grasped: int | None = 60,
    releases: tuple[Release, ...] = (),
    held_at_end: bool = False,
    true_steps: tuple[int, ...] = (),
    true_at_end: bool = False,
    displaced: tuple[Displacement, ...] = (),
    other: OtherGrasp | None = None,
    steps: int = 220,
) -> Evidence:
    """The trace of one bowl-on-plate episode: when the bowl was reached and held, how it was let go, when
    the goal held, and how the plate and bowl stood at the end."""
    bowl = ItemTrack(
        "akita_black_bowl_1",
        closest_m=0.0 if reached is not None else 0.12,
        closest_at=reached or 57,
        reached_at=reached,
        grasped_at=grasped,
        lift_m=0.1 if grasped is not None else 0.0,
        releases=list(releases),
        held_at_end=held_at_end,
        target_m_at_end=0.25,
    )
    track = PredicateTrack(BOWL_ON_PLATE, displaced=list(displaced))
    for step in range(1, steps + 1):
        track.record(step, step in true_steps or (true_at_end and step == steps))
    return Evidence(steps, [track], {bowl.name: bowl}, other_grasp=other)


def _release(*, fell: float, over_target: bool = False, step: int = 120) -> Release:
    return Release(step=step, height_m=0.15, target_m=0.0 if over_target else 0.2, over_target=over_target, fell_m=fell)


def test_given_a_gripper_that_never_came_near_the_bowl_then_never_reached_with_how_close_it_came() -> None:
    cause = decide(_carry(reached=None, grasped=None))
    assert cause.reason is FailureReason.NEVER_REACHED
    assert "akita_black_bowl_1" in cause.detail and "at closest 0.120 m" in cause.detail and "step 57" in cause.detail


def test_given_the_bowl_reached_but_never_lifted_then_grasp_failed() -> None:
    cause = decide(_carry(grasped=None))
    assert cause.reason is FailureReason.GRASP_FAILED
    assert cause.detail.startswith("reached akita_black_bowl_1 at step 40 but never held it")


def test_given_another_bowl_carried_and_the_goals_never_held_then_wrong_object_names_it() -> None:
    other = OtherGrasp("akita_black_bowl_2", step=70, lift_m=0.12)
    for reached in (None, 40):  # whether or not the gripper brushed the goal's bowl on the way
        cause = decide(_carry(reached=reached, grasped=None, other=other))
        assert cause.reason is FailureReason.WRONG_OBJECT
        assert "held akita_black_bowl_2 from step 70" in cause.detail and "akita_black_bowl_1" in cause.detail


def test_given_another_object_held_after_the_goals_was_then_the_goals_own_story_is_told() -> None:
    # the goal's bowl was carried and dropped; holding a second object later does not make it a wrong object
    other = OtherGrasp("akita_black_bowl_2", step=150, lift_m=0.05)
    cause = decide(_carry(releases=(_release(fell=0.1),), other=other))
    assert cause.reason is FailureReason.DROPPED


def test_given_the_bowl_let_go_in_the_air_away_from_the_plate_then_dropped() -> None:
    cause = decide(_carry(releases=(_release(fell=0.12),)))
    assert cause.reason is FailureReason.DROPPED
    assert cause.detail.startswith("akita_black_bowl_1 dropped at step 120") and "fell 0.12 m" in cause.detail


def test_given_a_fall_onto_the_plate_or_a_short_one_then_it_is_not_a_drop() -> None:
    over = decide(_carry(releases=(_release(fell=0.12, over_target=True),)))
    short = decide(_carry(releases=(_release(fell=FALL_M / 2),)))
    assert over.reason is FailureReason.WRONG_TARGET  # let go over the plate: a placement that missed
    assert short.reason is FailureReason.WRONG_TARGET  # set down, not dropped


def test_given_the_bowl_set_down_and_the_goal_never_holding_then_wrong_target_says_where() -> None:
    cause = decide(_carry(releases=(_release(fell=0.0, step=130),)))
    assert cause.reason is FailureReason.WRONG_TARGET
    assert cause.detail == (
        "akita_black_bowl_1 put down at step 130 away from plate_1's footprint, 0.20 m from its centre; "
        "(On akita_black_bowl_1 plate_1) never held"
    )
    on_the_plate = decide(_carry(releases=(_release(fell=0.0, over_target=True),)))
    assert on_the_plate.reason is FailureReason.WRONG_TARGET and "over plate_1's footprint" in on_the_plate.detail


def test_given_the_plate_tilted_or_pushed_away_then_knocked_over_before_wrong_target() -> None:
    tilted = Displacement("plate_1", tilt_deg=80.0, moved_m=0.0, is_target=True)
    pushed = Displacement("plate_1", tilt_deg=2.0, moved_m=0.09, is_target=True)
    for displaced in (tilted, pushed):
        cause = decide(_carry(releases=(_release(fell=0.0),), displaced=(displaced,)))
        assert cause.reason is FailureReason.KNOCKED_OVER
        assert "plate_1" in cause.detail
    assert "tilted 80°" in decide(_carry(displaced=(tilted,), held_at_end=True)).detail


def test_given_the_carried_bowl_moved_but_upright_then_it_is_not_knocked_over() -> None:
    carried = Displacement("akita_black_bowl_1", tilt_deg=5.0, moved_m=0.3, is_target=False)
    assert decide(_carry(held_at_end=True, displaced=(carried,))).reason is FailureReason.TIMEOUT_HOLDING


def test_given_the_bowl_still_held_when_the_steps_ran_out_then_timeout_holding() -> None:
    cause = decide(_carry(held_at_end=True))
    assert cause.reason is FailureReason.TIMEOUT_HOLDING
    assert cause.detail == "still holding akita_black_bowl_1 at step 220: akita_black_bowl_1 0.25 m from plate_1"


def test_given_the_goal_held_then_stopped_holding_then_undone_with_when() -> None:
    cause = decide(_carry(releases=(_release(fell=0.0, over_target=True),), true_steps=(150, 151, 152)))
    assert cause.reason is FailureReason.UNDONE
    assert "held from step 150 to step 152, not at step 220" in cause.detail


def test_given_a_drawer_reached_but_never_opened_then_timeout_and_never_reached_when_not() -> None:
    def drawer(reached: int | None) -> Evidence:
        item = ItemTrack("wooden_cabinet_1_top_region", closest_m=0.3, closest_at=12, reached_at=reached)
        return Evidence(300, [PredicateTrack(OPEN_DRAWER)], {item.name: item})

    half_done = decide(drawer(80))
    assert half_done.reason is FailureReason.TIMEOUT
    assert "(Open wooden_cabinet_1_top_region) never held" in half_done.detail and "step 80" in half_done.detail
    assert decide(drawer(None)).reason is FailureReason.NEVER_REACHED


def test_given_two_predicates_then_the_first_that_does_not_hold_at_the_end_is_judged() -> None:
    soup_in = Predicate.parse(["In", "alphabet_soup_1", "basket_1_contain_region"])
    sauce_in = Predicate.parse(["In", "tomato_sauce_1", "basket_1_contain_region"])
    done, missing = PredicateTrack(soup_in), PredicateTrack(sauce_in)
    done.record(200, True)
    soup = ItemTrack("alphabet_soup_1", reached_at=50, grasped_at=60)
    sauce = ItemTrack("tomato_sauce_1", closest_m=0.08, closest_at=260)
    cause = decide(Evidence(300, [done, missing], {soup.name: soup, sauce.name: sauce}))
    assert cause.reason is FailureReason.NEVER_REACHED and "tomato_sauce_1" in cause.detail


def test_given_a_goal_the_tracker_cannot_follow_then_timeout_says_why() -> None:
    cause = decide(
        Evidence(100, [], {}, untracked="goal predicates (Stack a b) are not ones the failure reasons follow")
    )
    assert cause.reason is FailureReason.TIMEOUT and "(Stack a b)" in cause.detail


@pytest.mark.parametrize(
    ("raw", "known", "item", "target"),
    [
        (["On", "bowl_1", "plate_1"], True, "bowl_1", "plate_1"),
        (["in", "soup_1", "basket_1_contain_region"], True, "soup_1", "basket_1_contain_region"),
        (["Turnon", "flat_stove_1"], True, "flat_stove_1", None),
        (["On", "bowl_1"], False, "bowl_1", None),
        (["Stack", "a", "b"], False, "a", None),
    ],
)
def test_predicates_parse_as_the_bddl_spells_them(raw: list[str], known: bool, item: str, target: str | None) -> None:
    pred = Predicate.parse(raw)
    assert (pred.known, pred.item, pred.target) == (known, item, target)


def test_an_episode_records_no_reason_on_success_error_on_an_error_else_the_cause_or_timeout() -> None:
    dropped = FailureCause(FailureReason.DROPPED, "akita_black_bowl_1 dropped at step 9")
    assert episode_failure(True, None, dropped, 9) == (None, None)
    assert episode_failure(False, "MuJoCo: unstable", dropped, 9) == (FailureReason.ERROR, "MuJoCo: unstable")
    assert episode_failure(False, None, dropped, 9) == (FailureReason.DROPPED, dropped.detail)
    assert episode_failure(False, None, None, 300) == (FailureReason.TIMEOUT, "no success within 300 steps")


def test_a_long_detail_is_cut_to_what_the_result_keeps() -> None:
    cause = FailureCause(FailureReason.ERROR, "x" * 2000)
    assert len(cause.detail) == DETAIL_CHARS
    EpisodeResult(
        init_state=0,
        seed=0,
        success=False,
        steps=1,
        wall_s=0.1,
        failure_reason=cause.reason,
        failure_detail=cause.detail,
    )


def test_given_a_scene_the_tracker_cannot_index_then_the_episode_goes_on_and_fails_as_timeout_saying_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # a scene without LIBERO's MuJoCo handles, e.g. a variant built otherwise: the tracker must not cost the episode
    scene = SimpleNamespace(parsed_problem={"goal_state": [["On", "akita_black_bowl_1", "plate_1"]]}, sim=None)
    tracker = LiberoFailureTracker()

    tracker.start(scene)
    for _ in range(3):
        tracker.observe(success=False)
    cause = tracker.cause()

    assert cause.reason is FailureReason.TIMEOUT
    assert cause.detail.startswith("no success within 3 steps; the failure tracker could not index this scene")
    assert "AttributeError" in cause.detail
    assert "failure tracker could not index this scene" in caplog.text
