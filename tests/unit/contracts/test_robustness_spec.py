"""The robustness setting of a matrix and a run: its spellings, its canonical form, and which episodes it plays."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rlinf_bench.contracts import EvalRun
from rlinf_bench.contracts.request import EvalMatrix, EvalRequest
from rlinf_bench.contracts.robustness import AXES, PerturbationAxis, RobustnessSpec

CHECKPOINT = {"uri": "s3://b/exp/checkpoints/global_step_10", "experiment": "exp", "global_step": 10}


def test_given_a_profile_name_then_every_axis_gets_its_levels() -> None:
    quick = RobustnessSpec.model_validate("quick")
    full = RobustnessSpec.model_validate("full")

    assert quick.axes == {axis: [2] for axis in AXES}
    assert full.axes == {axis: [1, 2, 3] for axis in AXES}
    assert quick.rotates and not full.rotates


def test_given_axes_with_and_without_levels_then_they_are_kept_in_the_canonical_order() -> None:
    spec = RobustnessSpec.model_validate(" Noise:2, camera:3,1, light ,camera:1")

    # LIBERO-plus's order of axes, distinct levels ascending; an axis without levels gets 1-3
    assert list(spec.axes) == [PerturbationAxis.CAMERA, PerturbationAxis.LIGHT, PerturbationAxis.NOISE]
    assert spec.axes[PerturbationAxis.CAMERA] == [1, 3]
    assert spec.axes[PerturbationAxis.LIGHT] == [1, 2, 3]
    assert spec.text() == "camera:1,3,light:1,2,3,noise:2"
    assert RobustnessSpec.model_validate(spec.text()) == spec


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("gravity:2", ["'gravity' is no axis", "camera", "quick"]),
        ("camera:x", ["level 'x' of camera"]),
        ("camera:²", ["level '²' of camera"]),
        ("camera:4", ["less than or equal to 3"]),
        (",", ["names no axis"]),
    ],
)
def test_given_a_bad_setting_then_the_error_names_the_part_and_the_choices(text: str, names: list[str]) -> None:
    with pytest.raises(ValidationError) as caught:
        RobustnessSpec.model_validate(text)
    for name in names:
        assert name in str(caught.value)


def test_given_a_profile_with_other_axes_then_it_is_refused() -> None:
    with pytest.raises(ValidationError, match="profile 'quick' and axes both given"):
        RobustnessSpec.model_validate({"profile": "quick", "axes": {"camera": [1]}})


@pytest.mark.parametrize("off", [None, "off", "none", "", False])
def test_given_off_then_a_run_and_a_matrix_play_no_perturbed_episode(off: object) -> None:
    assert EvalMatrix.model_validate({"robustness": off}).robustness is None
    assert _run(robustness=off).robustness is None


def test_given_robustness_then_the_request_digest_changes_and_off_keeps_the_old_one() -> None:
    plain = EvalRequest(checkpoint=CHECKPOINT)
    off = EvalRequest(checkpoint=CHECKPOINT, robustness="off")
    quick = EvalRequest(checkpoint=CHECKPOINT, robustness="quick")
    camera = EvalRequest(checkpoint=CHECKPOINT, robustness="camera:2")

    assert plain.digest() == off.digest()
    assert len({plain.digest(), quick.digest(), camera.digest()}) == 3
    # every run of the request carries it, and reads back as the same spec
    runs = quick.expand()
    assert runs and all(r.robustness == quick.robustness for r in runs)
    again = EvalRun.model_validate_json(runs[0].model_dump_json())
    assert again.robustness == quick.robustness


def test_given_quick_then_each_perturbed_state_plays_one_axis_in_turn_by_task_id() -> None:
    quick = RobustnessSpec.model_validate("quick")

    plan = quick.task_plan(task_id=0, trials=50)
    assert [(state, axis.value, level) for state, axis, level in plan] == [
        (0, "layout", 2),
        (1, "camera", 2),
        (2, "robot_init", 2),
        (3, "language", 2),
        (4, "light", 2),
    ]
    # task 1 goes on where task 0 stopped (5 states later), whatever other tasks the run has
    assert [axis.value for _, axis, _ in quick.task_plan(task_id=1, trials=50)][:2] == ["texture", "noise"]
    # over LIBERO-Spatial's ten tasks every axis gets 7 or 8 of the 50
    counts = {axis: 0 for axis in AXES}
    for task in range(10):
        for _, axis, _ in quick.task_plan(task, 50):
            counts[axis] += 1
    assert sorted(counts.values()) == [7, 7, 7, 7, 7, 7, 8]


def test_given_full_or_axes_then_every_perturbed_state_plays_every_pair() -> None:
    full = RobustnessSpec.model_validate("full")
    camera = RobustnessSpec.model_validate({"axes": {"camera": [0, 3]}, "states": 2})

    assert len(full.task_plan(3, 50)) == full.episodes_per_task(50) == 5 * 21
    assert [(s, a.value, lv) for s, a, lv in camera.task_plan(3, 50)] == [
        (0, "camera", 0),
        (0, "camera", 3),
        (1, "camera", 0),
        (1, "camera", 3),
    ]


@pytest.mark.parametrize(("trials", "states"), [(1, 1), (9, 1), (10, 1), (11, 2), (30, 3), (50, 5), (100, 10)])
def test_given_any_trials_then_a_tenth_of_the_states_at_least_one_is_perturbed(trials: int, states: int) -> None:
    spec = RobustnessSpec.model_validate("quick")
    assert spec.perturbed_states(trials) == states == spec.episodes_per_task(trials)
    # states given: at most the run's trials
    assert RobustnessSpec.model_validate({"profile": "full", "states": 20}).perturbed_states(trials) == min(20, trials)


def _run(**fields: object) -> EvalRun:
    base: dict[str, object] = {
        "request_id": "r",
        "checkpoint": CHECKPOINT,
        "suite": "libero_spatial",
        "run_index": 0,
        "seed": 0,
    }
    return EvalRun.model_validate({**base, **fields})
