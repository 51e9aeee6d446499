"""Steps inside an action chunk skip rendering, and that changes nothing a policy or a verdict sees.

The worker renders only the observation it sends back (the last step of a chunk, the last settle
step). These tests run the same episode twice on the real simulator, rendering every step and
rendering only where needed, and compare the physics after every step and the images that are read.
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

CHUNK = 6
SPEC = ObservationSpec(cameras=("agentview", "robot0_eye_in_hand"), resolution=64)


def _actions() -> np.ndarray:
    # a move that visibly changes the arm's pose and both images, then closes the gripper
    actions = np.zeros((2 * CHUNK, 7))
    actions[:, 0] = 0.6
    actions[:, 2] = -0.4
    actions[CHUNK:, 6] = 1.0
    return actions


def _episode(env: LiberoEnv, *, render_all: bool) -> tuple[dict[str, Any], list[np.ndarray], list[dict[str, Any]]]:
    """Start initial state 1 and run two chunks; the start observation, the state after every step, chunk ends."""
    env.keep_all_images = render_all
    start = env.start_episode(1, seed=7, settle_steps=4)
    states: list[np.ndarray] = []
    ends: list[dict[str, Any]] = []
    for i, action in enumerate(_actions()):
        last_of_chunk = i % CHUNK == CHUNK - 1
        obs, _ = env.step(action, render=render_all or last_of_chunk)
        states.append(env.sim.get_state().flatten().copy())
        if last_of_chunk:
            ends.append(obs)
    return start, states, ends


def test_given_renders_skipped_inside_chunks_then_physics_and_every_read_image_are_bit_identical(
    libero_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from robosuite.utils.binding_utils import MjSim

    real_render = MjSim.render
    rendered: list[str] = []

    def counting_render(self: Any, *args: Any, **kwargs: Any) -> Any:
        rendered.append(str(kwargs.get("camera_name")))
        return real_render(self, *args, **kwargs)

    monkeypatch.setattr(MjSim, "render", counting_render)
    configure_libero(libero_cache)
    env = LiberoEnv(get_suite("libero_spatial").task(0), SPEC, horizon=40)
    try:
        full_start, full_states, full_ends = _episode(env, render_all=True)
        renders_full = len(rendered)
        rendered.clear()
        lean_start, lean_states, lean_ends = _episode(env, render_all=False)
        renders_lean = len(rendered)
    finally:
        env.close()

    for step, (a, b) in enumerate(zip(full_states, lean_states, strict=True)):
        assert np.array_equal(a, b), f"simulator state differs after step {step}"
    for obs_full, obs_lean in [(full_start, lean_start), *zip(full_ends, lean_ends, strict=True)]:
        assert obs_full.keys() == obs_lean.keys()
        for key in obs_full:
            assert np.array_equal(obs_full[key], obs_lean[key]), key
    # the images are real renders, and they changed as the arm moved
    assert full_ends[1]["agentview_image"].std() > 5
    assert not np.array_equal(full_ends[0]["robot0_eye_in_hand_image"], full_ends[1]["robot0_eye_in_hand_image"])
    # two cameras, rendered for the start (last settle step) and each chunk's last step only
    assert renders_lean == 2 * (1 + 2)
    assert renders_full > 2 * (4 + 2 * CHUNK)  # every settle and chunk step, plus the reset's own observation


def test_given_the_render_context_kept_across_hard_resets_then_scenes_and_images_are_those_of_a_fresh_context(
    libero_cache: Path,
) -> None:
    configure_libero(libero_cache)
    env = LiberoEnv(get_suite("libero_spatial").task(0), SPEC, horizon=40)
    runs: dict[bool, list[tuple[dict[str, Any], np.ndarray, np.ndarray]]] = {}
    try:
        for reuse in (False, True):
            env.reuse_render_context = reuse
            env.render_contexts_reused = 0
            seen = []
            for init_state in (0, 2):  # initial state 2 replays the resets of 0 and 1 first: three hard resets
                obs = env.start_episode(init_state, seed=7, settle_steps=2)
                obs, _ = env.step(_actions()[0])
                seen.append((obs, env.sim.model.body_pos.copy(), env.sim.get_state().flatten().copy()))
            runs[reuse] = seen
            assert env.render_contexts_reused == (4 if reuse else 0)  # 1 + 3 resets, every one after the first
    finally:
        env.close()

    for (fresh_obs, fresh_bodies, fresh_state), (kept_obs, kept_bodies, kept_state) in zip(
        runs[False], runs[True], strict=True
    ):
        assert np.array_equal(fresh_bodies, kept_bodies) and np.array_equal(fresh_state, kept_state)
        for key in fresh_obs:
            assert np.array_equal(fresh_obs[key], kept_obs[key]), key
    # the two initial states are different scenes (fixtures placed from the replayed RNG), both rendered right
    assert not np.array_equal(runs[True][0][1], runs[True][1][1])
    assert not np.array_equal(runs[True][0][0]["agentview_image"], runs[True][1][0]["agentview_image"])
