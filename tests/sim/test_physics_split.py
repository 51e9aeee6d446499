"""Computing each sub-step's forward pass once changes nothing a policy, a video or a verdict sees.

The same episodes run twice on the real simulator, once through robosuite's own loop (three forward
passes per MuJoCo sub-step) and once with :mod:`eval_runner.physics`, and everything MuJoCo holds is
compared after every step: the full physics state, accelerations, constraint and contact forces, sensors,
body poses, the observation (camera images included) and LIBERO's success check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eval_runner.env import LiberoEnv
from eval_runner.libero_setup import configure_libero
from eval_runner.policies.base import ObservationSpec
from rlinf_bench.suites import get_suite

pytestmark = pytest.mark.sim

SPEC = ObservationSpec(cameras=("agentview", "robot0_eye_in_hand"), resolution=32)
STEPS = 30  # the arm travels while the gripper is driven open, then closed


def _actions(seed: int) -> np.ndarray:
    # random arm moves that reach the table and the objects, the gripper closing and opening in turn
    rng = np.random.default_rng(seed)
    actions = np.clip(rng.normal(0.0, 0.6, (STEPS, 7)), -1.0, 1.0)
    actions[:, 2] -= 0.3
    actions[:, 6] = np.where((np.arange(STEPS) // 15) % 2 == 0, -1.0, 1.0)
    return actions


def _everything(env: LiberoEnv) -> np.ndarray:
    import mujoco

    model, data = env.sim.model._model, env.sim.data._data
    spec = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
    state = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, state, spec)
    derived = (data.qacc, data.qfrc_constraint, data.cfrc_ext, data.sensordata, data.xpos, data.xquat, data.ctrl)
    return np.concatenate([state, *(np.ravel(x) for x in derived)])


def _episode(env: LiberoEnv, *, once: bool) -> list[tuple[np.ndarray, dict[str, Any], bool]]:
    env.physics_once = once
    start = env.start_episode(1, seed=7, settle_steps=5)  # the same scene each time (reference replay v2)
    seen = [(_everything(env), start, False)]
    for action in _actions(env.task.task_id):
        obs, done = env.step(action)
        seen.append((_everything(env), obs, done))
    return seen


@pytest.mark.parametrize("task_id", [0, 4])
def test_given_forward_passes_computed_once_then_every_step_is_bit_identical_to_robosuites_loop(
    libero_cache: Path, task_id: int
) -> None:
    configure_libero(libero_cache)
    env = LiberoEnv(get_suite("libero_spatial").task(task_id), SPEC, horizon=STEPS)
    try:
        stock = _episode(env, once=False)
        assert env.physics_counters.split_steps == 0
        once = _episode(env, once=True)
    finally:
        env.close()

    for step, ((state_a, obs_a, done_a), (state_b, obs_b, done_b)) in enumerate(zip(stock, once, strict=True)):
        assert np.array_equal(state_a, state_b), f"simulator differs after step {step}"
        assert done_a == done_b, f"success check differs after step {step}"
        assert obs_a.keys() == obs_b.keys()
        for key in obs_a:
            assert np.array_equal(obs_a[key], obs_b[key]), f"{key} differs after step {step}"
    # the episode did something: the arm moved and the images changed
    assert not np.array_equal(stock[1][1]["robot0_eef_pos"], stock[-1][1]["robot0_eef_pos"])
    assert not np.array_equal(stock[1][1]["agentview_image"], stock[-1][1]["agentview_image"])
    # and the shortcut was taken on every sub-step: 25 per control step, settle steps included
    counters = env.physics_counters
    assert counters.split_steps == 25 * (STEPS + 5) and counters.full_steps == 0
    assert counters.forwards_skipped >= 0.95 * counters.split_steps  # the controller's repeat, nearly every sub-step
