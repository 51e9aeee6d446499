"""The native robustness axes on real LIBERO rollouts: level 0 is the control episode bit for bit, each axis
changes what it claims and nothing else, and the draws do not depend on the number of workers.

The policy plays a fixed open-loop action sequence (the step's index decides the action, not what it sees),
so two episodes with the same physics see the same proprioception and simulator state whatever their
images or instruction, and an axis that claims not to touch the physics is caught if it does.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eval_runner.loop import evaluate
from eval_runner.policies.base import ObservationSpec, Policy
from rlinf_bench.contracts import EpisodeResult, RunResult
from rlinf_bench.robustness import AXIS_SCALES
from rlinf_bench.suites import get_suite
from tests.sim.helpers import make_run, settings

pytestmark = pytest.mark.sim

#: Every axis at level 0 and at one level above it, on initial state 0 of libero_spatial task 0.
SPEC = {
    "axes": {
        "layout": [0, 2],
        "camera": [0, 2],
        "robot_init": [0, 2],
        "language": [0, 1],
        "light": [0, 2],
        "texture": [0, 3],
        "noise": [0, 2],
    },
    "states": 1,
}
PHYSICS = ("robot0_joint_pos", "robot0_eef_pos", "robot0_gripper_qpos")


class OpenLoopRecorder(Policy):
    """Plays a fixed action per step index; keeps, per episode, every image, the proprioception, the goal
    object's and target's boxes (the simulator state) and the instruction it was given."""

    obs_spec = ObservationSpec(cameras=("agentview",), resolution=64, proprio=PHYSICS, privileged=True)

    def __init__(self) -> None:
        self.seen: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        actions = []
        for i, episode_id in enumerate(obs["episode_id"]):
            k = len(self.seen[episode_id])
            self.seen[episode_id].append(
                {
                    "image": obs["agentview_image"][i].copy(),
                    "physics": np.concatenate([obs[key][i] for key in PHYSICS]),
                    "state": obs["privileged_state"][i].copy(),
                    "instruction": obs["task_description"][i],
                }
            )
            actions.append([0.4 * math.sin(k / 2), 0.4 * math.cos(k / 2), -0.3, 0.0, 0.0, 0.1, -1.0 if k < 3 else 1.0])
        return np.asarray(actions, dtype=np.float32)


@pytest.fixture(scope="module")
def played(
    tmp_path_factory: pytest.TempPathFactory, libero_cache: Path
) -> dict[int, tuple[RunResult, OpenLoopRecorder]]:
    """The run with 1 worker, and its levels above 0 with 3 workers."""
    out: dict[int, tuple[RunResult, OpenLoopRecorder]] = {}
    for workers in (1, 3):
        policy = OpenLoopRecorder()
        # the second run plays the levels above 0 only: its draws must not depend on what else a run plays either
        spec = SPEC if workers == 1 else {**SPEC, "axes": {axis: levels[1:] for axis, levels in SPEC["axes"].items()}}
        run = make_run(trials_per_task=1, max_steps=6, robustness=spec, workers=workers)
        folder = tmp_path_factory.mktemp(f"robustness-{workers}")
        out[workers] = (
            evaluate(run, out_path=folder / "run.json", policy=policy, settings=settings(libero_cache)),
            policy,
        )
    return out


def _episodes(result: RunResult) -> dict[str, EpisodeResult]:
    task = result.tasks[0]
    out = {"control": task.episodes[0]}
    for episode in task.perturbed:
        assert episode.perturbation is not None
        out[f"{episode.perturbation.axis.value}{episode.perturbation.level}"] = episode
    return out


def _seen(policy: OpenLoopRecorder, tag: str) -> list[dict[str, Any]]:
    return policy.seen["t0-s0-a0" if tag == "control" else f"t0-s0-{tag}-a0"]


def _same(a: list[dict[str, Any]], b: list[dict[str, Any]], key: str) -> bool:
    return len(a) == len(b) and all(np.array_equal(x[key], y[key]) for x, y in zip(a, b, strict=True))


def test_given_level_zero_then_every_axis_plays_its_control_episode_bit_for_bit(played: dict) -> None:
    result, policy = played[1]
    episodes = _episodes(result)
    control = _seen(policy, "control")
    assert len(control) == 6 and result.tasks[0].success_rate == episodes["control"].success

    for axis in SPEC["axes"]:
        tag = f"{axis}0"
        ep = episodes[tag]
        assert ep.perturbation is not None and ep.perturbation.magnitude == 0.0 and ep.perturbation.params == {}
        assert (ep.success, ep.steps, ep.error) == (episodes["control"].success, episodes["control"].steps, None)
        seen = _seen(policy, tag)
        for key in ("image", "physics", "state", "instruction"):
            assert _same(seen, control, key), (tag, key)


def test_given_a_visual_axis_then_the_pixels_change_and_the_physics_does_not(played: dict) -> None:
    result, policy = played[1]
    episodes = _episodes(result)
    control = _seen(policy, "control")

    for tag in ("camera2", "light2", "texture3", "noise2"):
        seen = _seen(policy, tag)
        assert not np.array_equal(seen[0]["image"], control[0]["image"]), tag
        assert _same(seen, control, "physics") and _same(seen, control, "state"), tag
        assert episodes[tag].steps == episodes["control"].steps
    assert episodes["camera2"].perturbation.params["cameras"] == "agentview"  # type: ignore[union-attr]
    assert episodes["noise2"].perturbation.params["sigma"] == 8.0  # type: ignore[union-attr]
    # the noise axis noises every image anew, the others show a changed but steady scene
    noise = _seen(policy, "noise2")
    assert not np.array_equal(
        noise[1]["image"].astype(int) - noise[0]["image"], control[1]["image"].astype(int) - control[0]["image"]
    )


def test_given_a_language_rewrite_then_it_reaches_the_policy_and_nothing_else_changes(played: dict) -> None:
    result, policy = played[1]
    record = _episodes(result)["language1"].perturbation
    seen = _seen(policy, "language1")

    task_language = get_suite("libero_spatial").task(0).language
    assert record is not None and record.params["rewrite"] == "paraphrase"
    assert {row["instruction"] for row in seen} == {record.params["instruction"]} != {task_language}
    assert {row["instruction"] for row in _seen(policy, "control")} == {task_language}
    for key in ("image", "physics", "state"):
        assert _same(seen, _seen(policy, "control"), key), key


def test_given_robot_init_then_the_initial_joints_move_by_an_offset_of_the_magnitude(played: dict) -> None:
    result, policy = played[1]
    record = _episodes(result)["robot_init2"].perturbation
    bound = AXIS_SCALES["robot_init"].magnitude(2)  # type: ignore[index]

    assert record is not None
    offsets = np.asarray(record.params["joint_offsets_rad"])
    assert offsets.shape == (7,) and np.all(np.abs(offsets) <= bound) and np.max(np.abs(offsets)) > bound / 4
    assert np.linalg.norm(offsets) == pytest.approx(bound, abs=1e-6)  # LIBERO-plus's form: an offset of that length
    joints = _seen(policy, "robot_init2")[0]["physics"][:7] - _seen(policy, "control")[0]["physics"][:7]
    # the settle steps hold the arm where it was put: the first observation shows the offsets
    assert np.max(np.abs(joints)) > bound / 4 and np.all(np.abs(joints) <= bound + 0.02)
    # the objects are where the control has them (the arm starts clear of them)
    assert np.allclose(_seen(policy, "robot_init2")[0]["state"], _seen(policy, "control")[0]["state"], atol=1e-3)


def test_given_layout_then_the_goal_objects_stay_in_their_grown_regions_beside_a_distractor_and_the_arm_does_not(
    played: dict,
) -> None:
    result, policy = played[1]
    episode = _episodes(result)["layout2"]
    record = episode.perturbation
    distance = AXIS_SCALES["layout"].magnitude(2)  # type: ignore[index]

    assert record is not None and episode.error is None and 1 <= int(record.params["draws"]) <= 8
    assert len(record.params["distractors"].split(",")) == 2  # two distractors at level 2
    first, control = _seen(policy, "layout2")[0], _seen(policy, "control")[0]
    # the bowl starts in between_plate_ramekin_region, the plate in plate_region (libero_spatial task 0's BDDL)
    for box, (x0, y0, x1, y1) in ((slice(0, 6), (-0.06, 0.19, -0.04, 0.21)), (slice(6, 12), (0.05, 0.19, 0.07, 0.21))):
        centre = (first["state"][box][:3] + first["state"][box][3:]) / 2
        before = (control["state"][box][:3] + control["state"][box][3:]) / 2
        assert float(np.linalg.norm(centre[:2] - before[:2])) > 0.005  # moved
        slack = distance + 0.02  # the region grown by the magnitude, and what a box's centre is off its body's
        assert x0 - slack <= centre[0] <= x1 + slack and y0 - slack <= centre[1] <= y1 + slack, centre
    assert np.allclose(first["physics"], control["physics"], atol=1e-3)


def test_given_one_or_three_workers_then_every_episode_draws_and_plays_the_same(played: dict) -> None:
    (one, seen_one), (three, seen_three) = played[1], played[3]

    perturbed = [e.perturbation for e in one.tasks[0].perturbed if e.perturbation and e.perturbation.level > 0]
    assert perturbed == [e.perturbation for e in three.tasks[0].perturbed]
    assert len(seen_one.seen) == 15 and len(seen_three.seen) == 8 and set(seen_three.seen) <= set(seen_one.seen)
    for episode_id in seen_three.seen:
        for key in ("image", "physics", "state", "instruction"):
            assert _same(seen_one.seen[episode_id], seen_three.seen[episode_id], key), (episode_id, key)


def test_given_visual_and_language_axes_then_the_expert_plays_its_control_episode_exactly(
    tmp_path: Path, libero_cache: Path
) -> None:
    """The expert reads the simulator's state: what only the images or the instruction show cannot move it.
    (Its success falling with layout and robot_init magnitude is measured by bench/robustness_expert.py.)"""
    spec = "camera:3,light:3,texture:3,noise:3,language:3"
    run = make_run(policy="builtin:expert", trials_per_task=1, max_steps=220, robustness={**_parse(spec), "states": 1})
    result = evaluate(run, out_path=tmp_path / "expert.json", settings=settings(libero_cache))

    control = result.tasks[0].episodes[0]
    assert control.success, "the expert places the bowl on the plate from state 0"
    assert len(result.tasks[0].perturbed) == 5
    for episode in result.tasks[0].perturbed:
        assert (episode.success, episode.steps) == (control.success, control.steps), episode.perturbation


def _parse(spec: str) -> dict[str, Any]:
    from rlinf_bench.contracts.robustness import parse_robustness_text

    return parse_robustness_text(spec)


@pytest.mark.parametrize(("suite", "task_id"), [("libero_spatial", 1), ("libero_object", 0)])
def test_given_the_strongest_layout_then_the_policy_gets_a_settled_scene_without_interpenetration(
    libero_cache: Path, suite: str, task_id: int
) -> None:
    """Checked here after the settle steps, with the contacts as the policy's first step finds them: the
    perturbation's own checks run before (interpenetration) and right after the settle (drift)."""
    from eval_runner.env import LiberoEnv
    from eval_runner.libero_setup import configure_libero
    from eval_runner.perturbations.draw import AxisLevel
    from eval_runner.perturbations.libero import ScenePerturbations
    from eval_runner.perturbations.physical import layout_groups, penetrations
    from eval_runner.policies.base import ObservationSpec
    from eval_runner.scheduler import EpisodeTask
    from rlinf_bench.contracts import PerturbationAxis

    configure_libero(libero_cache)
    task = get_suite(suite).task(task_id)
    env = LiberoEnv(task, ObservationSpec(), horizon=20)
    perturbations = ScenePerturbations(suite, task)
    try:
        env.start_episode(0, 0, settle_steps=10)
        groups = layout_groups(env.raw_env.env)
        control = {name: env.sim.data.body_xpos[env.raw_env.env.obj_body_id[name]].copy() for name in groups}
        control_depths = penetrations(env.raw_env.env)
        fixtures = [name for name in env.raw_env.env.fixtures_dict if name in env.raw_env.env.obj_body_id]
        control_fixtures = [env.sim.data.body_xpos[env.raw_env.env.obj_body_id[name]].copy() for name in fixtures]

        layout = EpisodeTask(task_id, 0, 0, perturbation=AxisLevel(PerturbationAxis.LAYOUT, 3))
        start = perturbations.start(env, layout, settle_steps=10, settle_gripper=-1.0)
        assert start.env is not None and start.refused is None, start.record.params
        domain = start.env.raw_env.env  # the scene with the distractors
        depths = penetrations(domain)
        distractors = start.record.params["distractors"].split(",")
        speeds = {
            name: float(np.linalg.norm(domain.sim.data.cvel[domain.obj_body_id[name]][3:]))
            for name in [*groups, *distractors]
        }
        moved = {
            name: float(np.linalg.norm(domain.sim.data.body_xpos[domain.obj_body_id[name]][:2] - control[name][:2]))
            for name in groups
        }
        scene_fixtures = [domain.sim.data.body_xpos[domain.obj_body_id[name]].copy() for name in fixtures]
    finally:
        perturbations.close()
        env.close()

    assert groups and len(distractors) == 3 and not set(distractors) & set(groups)
    # the scene with distractors starts from the control's state: its fixtures stand where the control's reset put them
    assert np.allclose(scene_fixtures, control_fixtures, atol=1e-6), fixtures
    deeper = {pair: d for pair, d in depths.items() if d > max(0.002, control_depths.get(pair, 0.0) + 0.001)}
    assert not deeper, deeper
    assert max(speeds.values()) < 0.05, speeds
    distance = AXIS_SCALES["layout"].magnitude(3)  # type: ignore[index]
    # inside its region grown by the magnitude: no farther than the grown box's diagonal from where it stood
    assert all(0.0 < d < (0.05 + 2 * distance) * math.sqrt(2) for d in moved.values()), moved
