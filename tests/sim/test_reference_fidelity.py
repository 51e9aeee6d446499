"""Our episodes are OpenVLA-OFT's: the same fixtures, observations and camera frames, step for step.

The reference side is OFT's own loop (``run_libero_eval.py``: one ``OffScreenRenderEnv`` per task,
``env.seed(0)`` once, then per episode ``reset()``, ``set_init_state(states[i])``, 10 settle steps of
``[0, 0, 0, 0, 0, 0, -1]``, then the policy), driven by a fixed open-loop action sequence. Our side is
the runner at seed 0 with the same actions. Trials and horizon are tiny so this runs on 2 CPU cores.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eval_runner.env import LiberoEnv
from eval_runner.libero_setup import configure_libero
from eval_runner.loop import evaluate
from eval_runner.policies.base import ObservationSpec, Policy
from eval_runner.scheduler import RngStart, seeded_state
from rlinf_bench.contracts import RunResult
from rlinf_bench.suites import TaskInfo, get_suite
from tests.sim.helpers import episode_rows, make_run, settings

pytestmark = pytest.mark.sim

CAMERAS = ("agentview", "robot0_eye_in_hand")
RESOLUTION = 64
TRIALS = 3
MAX_STEPS = 3
SETTLE = 10
DUMMY_ACTION = [0, 0, 0, 0, 0, 0, -1]  # OFT's get_libero_dummy_action
# Open-loop actions big enough to move the arm and close the gripper within 3 steps.
ACTIONS = np.array(
    [
        [0.6, -0.4, 0.3, 0.1, -0.1, 0.2, -1.0],
        [-0.5, 0.5, -0.6, 0.0, 0.2, -0.2, 1.0],
        [0.3, 0.3, 0.5, -0.2, 0.0, 0.1, 1.0],
    ]
)

Observation = dict[str, np.ndarray]
DRAWER_TASK = "libero_spatial/4"


def _oft_reference(task: TaskInfo) -> list[list[Observation]]:
    """OFT's loop, verbatim in structure: what its policy would see, per episode and step."""
    import torch
    from libero.libero.envs import OffScreenRenderEnv

    states = torch.load(task.init_states_file, weights_only=False)
    env = OffScreenRenderEnv(bddl_file_name=str(task.bddl_file), camera_heights=RESOLUTION, camera_widths=RESOLUTION)
    env.seed(0)
    episodes: list[list[Observation]] = []
    try:
        for episode_idx in range(TRIALS):
            env.reset()
            obs = env.set_init_state(states[episode_idx])
            seen: list[Observation] = []
            t = 0
            while t < MAX_STEPS + SETTLE:
                if t < SETTLE:
                    obs, _, _, _ = env.step(DUMMY_ACTION)
                    t += 1
                    continue
                seen.append({k: np.array(v) for k, v in obs.items()})
                obs, _, done, _ = env.step(ACTIONS[t - SETTLE].tolist())
                if done:
                    break
                t += 1
            episodes.append(seen)
    finally:
        env.close()
    return episodes


@pytest.fixture(scope="module")
def references(libero_cache: Path) -> dict[str, list[list[Observation]]]:
    configure_libero(libero_cache)
    refs = {suite: _oft_reference(get_suite(suite).task(0)) for suite in ("libero_goal", "libero_spatial")}
    # a drawer's open/close sampler: LIBERO's reset draws from one more copy of it every time (see below)
    refs[DRAWER_TASK] = _oft_reference(get_suite("libero_spatial").task(4))
    return refs


class OpenLoop(Policy):
    """Replays ACTIONS per episode and keeps every observation row it was given."""

    def __init__(self, proprio: tuple[str, ...]) -> None:
        self.obs_spec = ObservationSpec(cameras=CAMERAS, resolution=RESOLUTION, proprio=proprio)
        self.seen: dict[str, list[Observation]] = defaultdict(list)

    def act(self, obs: dict[str, Any]) -> Any:
        out = []
        for i, episode_id in enumerate(obs["episode_id"]):
            self.seen[episode_id].append({k: np.array(v[i]) for k, v in obs.items() if isinstance(v, np.ndarray)})
            out.append(ACTIONS[len(self.seen[episode_id]) - 1])
        return np.stack(out)


def _proprio_keys(reference: list[list[Observation]]) -> tuple[str, ...]:
    return tuple(sorted(k for k in reference[0][0] if not k.endswith("_image")))


def _assert_same(ours: Observation, theirs: Observation, where: str) -> None:
    for key, value in ours.items():
        expected = theirs[key]
        # the runner hands policies float32 proprio; LIBERO's float64 values rounded once
        expected = expected if key.endswith("_image") else expected.astype(np.float32)
        assert np.array_equal(value, expected), f"{where}: {key} differs (max {np.abs(value - expected).max()})"


def _run_ours(
    suite: str, workers: int, proprio: tuple[str, ...], tmp_path: Path, cache: Path, task: int = 0
) -> tuple[OpenLoop, RunResult]:
    policy = OpenLoop(proprio)
    run = make_run(suite=suite, task_ids=[task], trials_per_task=TRIALS, max_steps=MAX_STEPS, workers=workers, seed=0)
    result = evaluate(run, out_path=tmp_path / f"{suite}-{workers}.json", policy=policy, settings=settings(cache))
    assert result.protocol is not None and result.protocol.rng_scheme == "reference-replay-v2"
    assert (result.settle_steps, result.protocol.settle_gripper) == (SETTLE, -1.0)
    if workers > 1:  # the workers waiting for the first reset built their scenes meanwhile (Rollout._prepare_scene)
        assert result.provenance.extra["throughput"]["scenes_prepared"] >= 1
    return policy, result


@pytest.mark.parametrize("suite", ["libero_goal", "libero_spatial"])
def test_given_seed_0_and_two_workers_then_every_observation_and_frame_equals_ofts_loop(
    suite: str, references: dict[str, list[list[Observation]]], tmp_path: Path, libero_cache: Path
) -> None:
    reference = references[suite]
    policy, _ = _run_ours(suite, 2, _proprio_keys(reference), tmp_path, libero_cache)

    assert sorted(policy.seen) == [f"t0-s{i}-a0" for i in range(TRIALS)]
    for i in range(TRIALS):
        ours = policy.seen[f"t0-s{i}-a0"]
        assert len(ours) == len(reference[i]) == MAX_STEPS
        for step, (row, ref) in enumerate(zip(ours, reference[i], strict=True)):
            _assert_same(row, ref, f"{suite} episode {i} step {step}")
    # Non-trivial: the episodes differ from each other, and the actions moved the arm.
    assert not np.array_equal(reference[0][0]["agentview_image"], reference[1][0]["agentview_image"])
    assert not np.allclose(reference[0][0]["robot0_eef_pos"], reference[0][-1]["robot0_eef_pos"])


@pytest.mark.parametrize("workers", [1, 3])
def test_given_one_or_three_workers_then_the_episodes_are_still_ofts(
    workers: int, references: dict[str, list[list[Observation]]], tmp_path: Path, libero_cache: Path
) -> None:
    """With the two-worker case above, this is the check that the worker count changes no episode: each
    count's every observation and frame equals the same reference, and so the same episodes are recorded."""
    reference = references["libero_goal"]
    policy, result = _run_ours("libero_goal", workers, _proprio_keys(reference), tmp_path, libero_cache)

    assert sorted(policy.seen) == [f"t0-s{i}-a0" for i in range(TRIALS)]
    for i in range(TRIALS):
        for step, (row, ref) in enumerate(zip(policy.seen[f"t0-s{i}-a0"], reference[i], strict=True)):
            _assert_same(row, ref, f"{workers} workers, episode {i} step {step}")
    # (task, initial state, seed, success, steps): the open-loop actions never finish the task
    assert episode_rows(result) == [(0, i, 0, False, MAX_STEPS) for i in range(TRIALS)]


def test_given_episodes_out_of_order_on_one_env_then_each_starts_with_ofts_fixtures(
    references: dict[str, list[list[Observation]]], libero_cache: Path
) -> None:
    reference = references["libero_goal"]
    configure_libero(libero_cache)
    spec = ObservationSpec(cameras=CAMERAS, resolution=RESOLUTION, proprio=_proprio_keys(reference))
    env = LiberoEnv(get_suite("libero_goal").task(0), spec, horizon=MAX_STEPS)
    seed0 = RngStart(seed=0, base_index=0, state=seeded_state(0))
    try:
        # 2 first (replays resets 0 and 1 from the seed), then 0, then 1 from the state episode 0 left.
        _assert_same(env.start_episode(2, 0, SETTLE, seed0), reference[2][0], "episode 2 first")
        assert env.extra_resets == 2
        _assert_same(env.start_episode(0, 0, SETTLE, seed0), reference[0][0], "episode 0 after 2")
        after_0 = env.rng_after_reset
        assert after_0 is not None
        _assert_same(env.start_episode(1, 0, SETTLE, RngStart(0, 1, after_0)), reference[1][0], "episode 1 last")
        assert env.extra_resets == 2  # a known state needs no replayed reset
    finally:
        env.close()


def test_given_a_task_with_a_drawer_then_every_start_places_the_fixtures_as_ofts_reset_of_that_index(
    references: dict[str, list[list[Observation]]], tmp_path: Path, libero_cache: Path
) -> None:
    """libero_spatial task 4 sets its drawer closed through a sampler that LIBERO appends to a list at every
    reset and draws from every copy of: OFT's reset *i* draws i + 2 times before it places the cabinet and
    the stove, so an env that had another number of resets before would place them elsewhere."""
    reference = references[DRAWER_TASK]
    proprio = _proprio_keys(reference)
    configure_libero(libero_cache)
    spec = ObservationSpec(cameras=CAMERAS, resolution=RESOLUTION, proprio=proprio)
    env = LiberoEnv(get_suite("libero_spatial").task(4), spec, horizon=MAX_STEPS)
    seed0 = RngStart(seed=0, base_index=0, state=seeded_state(0))
    try:
        # one env, a history unlike OFT's: 1, then 1 again, then 0, then 2 from the state 1 left
        _assert_same(env.start_episode(1, 0, SETTLE, seed0), reference[1][0], "episode 1 first")
        _assert_same(env.start_episode(1, 0, SETTLE, seed0), reference[1][0], "episode 1 again")
        _assert_same(env.start_episode(0, 0, SETTLE, seed0), reference[0][0], "episode 0 after 1")
        _assert_same(env.start_episode(1, 0, SETTLE, seed0), reference[1][0], "episode 1 a third time")
        assert env.rng_after_reset is not None
        after_1 = env.rng_after_reset
        _assert_same(env.start_episode(2, 0, SETTLE, RngStart(0, 2, after_1)), reference[2][0], "episode 2 last")
    finally:
        env.close()
    # and through the runner, whatever worker ran which episode
    policy, _ = _run_ours("libero_spatial", 2, proprio, tmp_path, libero_cache, task=4)
    for i in range(TRIALS):
        for step, (row, ref) in enumerate(zip(policy.seen[f"t4-s{i}-a0"], reference[i], strict=True)):
            _assert_same(row, ref, f"task 4 episode {i} step {step}")
    assert not np.array_equal(reference[0][0]["agentview_image"], reference[1][0]["agentview_image"])
