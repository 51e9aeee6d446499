"""LIBERO's scenes in the worker processes: one :class:`~eval_runner.env.LiberoEnv` per task.

:class:`LiberoScenes` is what the LIBERO kind sends to each worker (pickled): it configures LIBERO there,
imports the simulator once and builds each task's scene; :class:`LiberoScene` resets a scene to a fixed
initial state from the scheduler's reference RNG state (:mod:`eval_runner.scheduler`), settles it and
steps it.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from eval_runner.envs.kinds import EpisodeStart
from eval_runner.envs.libero_failures import LiberoFailureTracker
from eval_runner.policies.base import ObservationSpec
from eval_runner.scheduler import EpisodeTask

if TYPE_CHECKING:
    from eval_runner.env import LiberoEnv
    from eval_runner.failure_reasons import FailureCause

__all__ = ["LiberoScene", "LiberoScenes", "freeze_imports"]


def freeze_imports(package: str = "libero") -> None:
    """Import the simulator, then exempt every object created so far from the cyclic garbage collector.

    robosuite's ``MjSim.free()`` runs a full ``gc.collect()`` at every LIBERO reset, i.e. once per episode,
    and a full collection walks every tracked object. ~117,000 of them come from the imports (modules,
    functions, classes, numba's types) and live as long as the process. Frozen (``gc.freeze``), they are
    skipped. Every object created later, each scene's included, is collected as before, so nothing a reset
    drops is kept (bench/worker_start.py measures what it saves).
    """
    with contextlib.suppress(ImportError):  # the first scene build reports it, with its fix
        importlib.import_module(f"{package}.{package}.envs.env_wrapper")  # robosuite, MuJoCo, numba
    gc.collect()
    gc.freeze()


@dataclass(frozen=True)
class LiberoScenes:
    """Builds a LIBERO run's scenes in a worker (the kind's :class:`~eval_runner.envs.kinds.SceneMaker`)."""

    suite: str
    obs_spec: ObservationSpec  # the policy's, at the run's render resolution
    horizon: int  # max steps + settle steps (robosuite's own horizon is set beyond it)
    settle_gripper: float = -1.0  # gripper of the settle action (the run's protocol)
    cache_dir: Path | None = None
    scene_hook: str | None = None  # TEST-ONLY 'module:function' called with the LiberoEnv after settling
    package: str = "libero"  # the LIBERO distribution whose scene classes build its tasks (TaskInfo.package)

    def setup_worker(self) -> None:  # pragma: no cover - runs in the child
        """LIBERO's config and rendering, then the simulator's import, frozen out of the cyclic GC."""
        from eval_runner.libero_setup import configure_libero

        if os.environ.get("MUJOCO_EGL_DEVICE_ID"):
            # The parent already mapped the GPU to its EGL index. robosuite insists that this index also
            # appear in CUDA_VISIBLE_DEVICES; workers use no CUDA, so hide it rather than fight the check.
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        configure_libero(self.cache_dir, needs_renderer=bool(self.obs_spec.cameras), package=self.package)
        freeze_imports(self.package)

    def make(self, task_id: int, *, video: bool) -> LiberoScene:  # pragma: no cover - runs in the child
        return LiberoScene(self, task_id, video=video)


class LiberoScene:  # pragma: no cover - runs in the child
    """One LIBERO task's scene: reset from the reference RNG state, settle, step (success: LIBERO's check)."""

    def __init__(self, scenes: LiberoScenes, task_id: int, *, video: bool) -> None:
        from eval_runner.env import VIDEO_CAMERA, LiberoEnv, load_hook
        from eval_runner.perturbations.libero import ScenePerturbations
        from rlinf_bench.suites import get_suite

        self.settle_gripper = scenes.settle_gripper
        self.env: LiberoEnv = LiberoEnv(
            get_suite(scenes.suite).task(task_id), scenes.obs_spec, horizon=scenes.horizon, video=video
        )
        self.hook = load_hook(scenes.scene_hook) if scenes.scene_hook else None
        self.perturbations = ScenePerturbations(scenes.suite, self.env.task)
        self.setup_s = float(self.env.setup_s)
        self.records_video = VIDEO_CAMERA in self.env.cameras
        # a policy without cameras reads proprioception only, which a step gives without rendering
        self.observation_needs_render = bool(scenes.obs_spec.cameras)
        self.failures = LiberoFailureTracker()  # why an episode failed, from the goal and the MuJoCo state
        self.active: LiberoEnv = self.env  # the scene the running episode plays on (a layout's: with distractors)

    def start_episode(self, episode: EpisodeTask, settle_steps: int) -> EpisodeStart:
        if episode.perturbation is not None:  # robustness: the twin's start with one axis applied
            return self._start_perturbed(episode, settle_steps)
        self.perturbations.noise = None
        self.active = self.env
        obs = self.env.start_episode(
            episode.init_state, episode.seed, settle_steps, episode.rng, settle_gripper=self.settle_gripper
        )
        if self.hook is not None:
            self.hook(self.env)
            obs = self.env.refresh_observation()
        self.failures.start(self.env.raw_env.env)
        return EpisodeStart(observation=obs, next_start=self.env.rng_after_reset)

    def _start_perturbed(self, episode: EpisodeTask, settle_steps: int) -> EpisodeStart:
        start = self.perturbations.start(self.env, episode, settle_steps, self.settle_gripper)
        self.active = start.env or self.env
        obs = start.observation
        if self.hook is not None:
            self.hook(self.active)
            obs = self.perturbations.observation(self.active.refresh_observation())
        self.failures.start(self.active.raw_env.env)
        return EpisodeStart(
            observation=obs,
            next_start=self.env.rng_after_reset,
            instruction=start.instruction,
            perturbation=start.record,
            refused=start.refused,
        )

    def step(self, action: np.ndarray, *, render: bool) -> tuple[dict[str, Any], bool]:
        obs, success = self.active.step(action, render=render)
        self.failures.observe(success)
        return (self.perturbations.observation(obs) if render else obs), success

    def failure(self) -> FailureCause:
        return self.failures.cause()

    def video_frame(self) -> np.ndarray | None:
        return self.active.video_frame()

    def close(self) -> None:
        self.perturbations.close()
        self.env.close()
