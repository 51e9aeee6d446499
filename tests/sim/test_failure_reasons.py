"""Failure reasons in the real simulator: forced failures get the reason that caused them, and every failed
episode of a noisy expert gets one. LIBERO-Spatial task 0 (goal ``(On akita_black_bowl_1 plate_1)``) with the
scripted expert; six short episodes (about a minute on 2 quiet cores)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eval_runner.loop import evaluate
from eval_runner.policies.base import Policy
from eval_runner.policies.factory import load_policy
from rlinf_bench.contracts import EpisodeResult, FailureReason, RunResult
from rlinf_bench.suites import TaskInfo
from tests.sim.helpers import make_run, settings

pytestmark = pytest.mark.sim

#: How high above where it rested the expert's object must be before the gripper is forced open.
CARRIED_M = 0.05


class OpenedMidCarry(Policy):
    """builtin:expert, but once it has lifted its object CARRIED_M (read from the privileged state the expert
    gets) the gripper is forced open for the rest of the episode."""

    def __init__(self) -> None:
        self.expert = load_policy("builtin:expert", None)
        self.obs_spec = self.expert.obs_spec
        self.rested: dict[str, float] = {}  # episode -> the object's bottom at the first step
        self.opened: dict[str, int] = {}  # episode -> the call that first forced the gripper open

    def check_tasks(self, tasks: list[TaskInfo]) -> None:
        self.expert.check_tasks(tasks)

    def reset(self, episode_ids: list[str]) -> None:
        self.expert.reset(episode_ids)

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        actions = np.array(self.expert.act(obs), copy=True)
        for row, episode_id in enumerate(obs["episode_id"]):
            bottom = float(obs["privileged_state"][row][2])
            rested = self.rested.setdefault(episode_id, bottom)
            if episode_id in self.opened or bottom - rested > CARRIED_M:
                self.opened.setdefault(episode_id, len(self.opened))
                actions[row, -1] = -1.0  # open
        return actions


def _episode(result: RunResult) -> EpisodeResult:
    [task] = result.tasks
    [episode] = task.episodes
    return episode


def test_given_the_gripper_forced_open_mid_carry_then_the_episode_failed_because_it_dropped_the_bowl(
    tmp_path: Path, libero_cache: Path
) -> None:
    policy = OpenedMidCarry()
    run = make_run(policy="builtin:expert", max_steps=100)
    result = evaluate(run, out_path=tmp_path / "drop.json", policy=policy, settings=settings(libero_cache))

    episode = _episode(result)
    assert policy.opened, "the expert never lifted the bowl: the forced case did not happen"
    assert not episode.success
    assert episode.failure_reason is FailureReason.DROPPED, episode.failure_detail
    assert episode.failure_detail is not None and episode.failure_detail.startswith("akita_black_bowl_1 dropped")
    # the result file says the same
    assert _episode(RunResult.load(tmp_path / "drop.json")).failure_reason is FailureReason.DROPPED


def test_given_the_expert_sent_to_the_other_bowl_then_the_episode_failed_on_the_wrong_object(
    tmp_path: Path, libero_cache: Path
) -> None:
    run = make_run(policy="builtin:expert", max_steps=100)
    opts = settings(libero_cache, scene_hook="tests.sim.scene_hooks:expert_to_the_other_bowl")
    result = evaluate(run, out_path=tmp_path / "wrong.json", settings=opts)

    episode = _episode(result)
    assert not episode.success
    assert episode.failure_reason is FailureReason.WRONG_OBJECT, episode.failure_detail
    assert episode.failure_detail is not None and "held akita_black_bowl_2" in episode.failure_detail


def test_given_a_noisy_expert_then_every_failed_episode_has_a_reason_and_every_success_none(
    noisy_expert_run: Path,
) -> None:
    # the session's run of builtin:expert?noise=1.5 on tasks 0 and 1, two initial states each
    episodes = [e for t in RunResult.load(noisy_expert_run).tasks for e in t.episodes]
    failed = [e for e in episodes if not e.success]
    assert len(episodes) == 4 and failed and len(failed) < 4, [e.success for e in episodes]
    for e in failed:
        assert e.failure_reason is not None and e.failure_detail, e
        assert e.failure_reason is not FailureReason.ERROR
    assert all(e.failure_reason is None and e.failure_detail is None for e in episodes if e.success)
