"""Helpers shared by the simulator tests."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eval_runner.policies.base import Policy
from eval_runner.settings import EvalSettings
from rlinf_bench.contracts import CheckpointRef, EvalRun, RunResult
from rlinf_bench.errors import WorkerCrashError
from rlinf_bench.suites import TaskInfo

NO_CHECKPOINT = CheckpointRef(uri="", experiment="none", global_step=0)
REPO = Path(__file__).resolve().parents[2]
#: The horizon of builtin:expert's pick-and-place runs on LIBERO-Spatial: room for the slowest clean success.
EXPERT_MAX_STEPS = 220


def make_run(**overrides: object) -> EvalRun:
    """A tiny run on libero_spatial task 0 with the zero policy under the OFT protocol; override any field."""
    fields: dict[str, object] = {
        "request_id": "simtest",
        "checkpoint": NO_CHECKPOINT,
        "suite": "libero_spatial",
        "run_index": 0,
        "seed": 0,
        "task_ids": [0],
        "trials_per_task": 1,
        "max_steps": 5,
        "policy": "builtin:zero",
        "workers": 1,
        # The simulator tests check OpenVLA-OFT's loop (10 settle steps, gripper -1); the default became the
        # rlinf protocol (15 settle steps, gripper 0), so they name theirs. A test of another sets it.
        "protocol": "oft",
    }
    fields.update(overrides)
    return EvalRun.model_validate(fields)


def settings(cache: Path, **overrides: object) -> EvalSettings:
    return EvalSettings.model_validate({"cache_dir": cache, "progress": False, **overrides})


class RecordingPolicy(Policy):
    """Wraps a policy and keeps, per episode, one row per step in ``seen``; subclasses say what a row is in act()."""

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.obs_spec = inner.obs_spec
        self.seen: dict[str, list[np.ndarray]] = defaultdict(list)

    def act(self, obs: dict[str, Any]) -> Any:
        raise NotImplementedError

    def reset(self, episode_ids: list[str]) -> None:
        self.inner.reset(episode_ids)

    def check_tasks(self, tasks: list[TaskInfo]) -> None:
        self.inner.check_tasks(tasks)


class ProprioRecording(RecordingPolicy):
    """Calls the policy row by row and keeps every proprio row it was given, per episode.

    Row by row because batched float32 matmuls round by batch composition, which depends on timing."""

    def act(self, obs: dict[str, Any]) -> Any:
        rows = []
        for i, episode_id in enumerate(obs["episode_id"]):
            self.seen[episode_id].append(np.concatenate([obs[k][i] for k in self.obs_spec.proprio]))
            row = {k: v[i : i + 1] for k, v in obs.items()}  # arrays and lists slice alike
            rows.append(self.inner.act(row)[0])
        return np.stack(rows)


def episode_rows(result: RunResult) -> list[tuple[int, int, int, bool, int]]:
    """(task, initial state, seed, success, steps) of every episode, in the result's order."""
    return [(t.task_id, e.init_state, e.seed, e.success, e.steps) for t in result.tasks for e in t.episodes]


@dataclass(frozen=True)
class CrashedRun:
    """A run whose worker crashed at every try of initial state 1: the error it raised and the file it left."""

    error: WorkerCrashError
    result_json: bytes
