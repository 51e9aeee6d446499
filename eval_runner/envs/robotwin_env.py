"""RoboTwin's scenes in the worker processes, driven the way the official evaluation drives them.

Per episode: the task's scripted expert plays candidate seeds (``setup_demo(is_test=True)``,
``play_once()``) and a seed counts only when ``plan_success and check_success()``
(:func:`~eval_runner.envs.robotwin_seeds.solvable_seeds`); then the scene is built from that seed for the
policy, which acts until the env's own ``check_success()`` fires inside ``take_action``
(``eval_success``) or the task's step limit (its ``_eval_step_limit``, which the loop enforces) is reached.
The runtime's env class is created fresh for every scene, as upstream does.

The task env classes come from the installed runtime (SAPIEN, and the assets validated by
:func:`eval_runner.envs.robotwin_assets.resolve_assets` in the loop's process), or, in tests, from a
stand-in with the same methods (``runtime``: ``module:attribute`` of a :class:`Runtime`).
"""

from __future__ import annotations

import importlib
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from eval_runner.envs.kinds import EpisodeStart
from eval_runner.envs.robotwin_assets import AssetsRoot
from eval_runner.envs.robotwin_seeds import ExpertVerdict, SkippedSeed, solvable_seeds, start_seed
from eval_runner.envs.robotwin_tasks import RoboTwinTask
from eval_runner.scheduler import EpisodeTask, RngStart
from rlinf_bench.errors import ConfigError

__all__ = ["INSTALLED", "RoboTwinScene", "RoboTwinScenes", "Runtime", "build_task_args", "load_runtime"]

#: The head camera's type in the task configs (its size comes from ``_camera_config``).
HEAD_CAMERA = "D435"
#: The camera of a RoboTwin episode's video (``get_obs()["observation"][...]["rgb"]``).
VIDEO_CAMERA = "head_camera"


def build_task_args(task: str, assets: AssetsRoot, task_config: str, planner: str) -> dict[str, Any]:
    """The keyword arguments ``setup_demo`` takes, as the runtime's VectorEnv assembles them."""
    from robotwin.config import load_task_config

    args: dict[str, Any] = load_task_config(task_config)
    embodiments = load_task_config("_embodiment_config")
    cameras = load_task_config("_camera_config")
    embodiment = args["embodiment"]
    if len(embodiment) != 1:
        raise ValueError(f"task config {task_config!r}: only single-embodiment configs are supported ({embodiment})")
    robot_file = str(assets.root / embodiments[embodiment[0]]["file_path"])
    with open(Path(robot_file) / "config.yml", encoding="utf-8") as f:
        robot_config = yaml.safe_load(f)
    args.update(
        task_name=task,
        task_config=task_config,
        left_robot_file=robot_file,
        right_robot_file=robot_file,
        left_embodiment_config=robot_config,
        right_embodiment_config=robot_config,
        dual_arm_embodied=True,
        embodiment_name=str(embodiment[0]),
        head_camera_h=cameras[HEAD_CAMERA]["h"],
        head_camera_w=cameras[HEAD_CAMERA]["w"],
        planner_backend=planner,
        eval_mode=True,
        eval_video_log=False,
        render_freq=0,
        save_data=False,
    )
    return args


class Runtime(Protocol):
    """Where a task's env class comes from."""

    def task_class(self, task: str) -> Callable[[], Any]:
        """The env class of ``task`` (``setup_demo``, ``play_once``, ``get_obs``, ``take_action``…)."""
        ...

    def unstable_error(self) -> type[Exception]:
        """The exception a scene raises when its objects do not settle (a skipped seed)."""
        ...


class _InstalledRuntime:
    """The ``robotwin`` package's task envs (they import SAPIEN)."""

    def task_class(self, task: str) -> Callable[[], Any]:
        cls: Callable[[], Any] = getattr(importlib.import_module(f"robotwin.envs.{task}"), task)
        return cls

    def unstable_error(self) -> type[Exception]:
        from robotwin.envs.utils.create_actor import UnStableError

        error: type[Exception] = UnStableError
        return error


INSTALLED: Runtime = _InstalledRuntime()


def load_runtime(spec: str | None) -> Runtime:
    """The installed runtime (``None``), or a stand-in named ``module:attribute`` (tests without assets)."""
    if spec is None:
        return INSTALLED
    module, _, attr = spec.partition(":")
    try:
        runtime: Runtime = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"cannot load the RoboTwin runtime stand-in {spec!r} (module:attribute): {exc}") from exc
    return runtime


@dataclass(frozen=True)
class RoboTwinScenes:
    """Builds a RoboTwin run's scenes in a worker (the kind's :class:`~eval_runner.envs.kinds.SceneMaker`)."""

    tasks: tuple[RoboTwinTask, ...]
    assets: AssetsRoot
    task_config: str
    planner: str
    instruction_type: str
    max_skips: int
    runtime: str | None = None  # TEST-ONLY: a stand-in for the installed runtime (see load_runtime)

    def setup_worker(self) -> None:
        # The task modules resolve meshes and textures through ASSETS_PATH (the runtime's VectorEnv sets it too).
        os.environ["ASSETS_PATH"] = str(self.assets.root)
        os.environ["ROBOTWIN_ASSETS_ROOT"] = str(self.assets.root)

    def make(self, task_id: int, *, video: bool) -> RoboTwinScene:
        task = next((t for t in self.tasks if t.task_id == task_id), None)
        if task is None:
            raise ConfigError(f"task {task_id} is not one of this run's RoboTwin tasks")
        return RoboTwinScene(self, task)


class RoboTwinScene:
    """One RoboTwin task: each episode's seed walked with the expert, then a fresh scene for the policy.

    Observations are the runtime's ``get_obs()`` dict (rendered by the runtime's own cameras), as one
    row ``{"observation": dict}``; actions are 14 qpos targets (``take_action(action, "qpos")``).
    """

    records_video = True  # every observation holds the head camera's image
    observation_needs_render = True  # the policy's observation is get_obs(), which renders

    def __init__(self, scenes: RoboTwinScenes, task: RoboTwinTask) -> None:
        t0 = time.perf_counter()
        runtime = load_runtime(scenes.runtime)
        self.scenes = scenes
        self.task = task
        self._new = runtime.task_class(task.name)
        self._unstable = runtime.unstable_error()
        self.args = build_task_args(task.name, scenes.assets, scenes.task_config, scenes.planner)
        self.env: Any = None
        self.last_obs: dict[str, Any] = {}
        self.setup_s = time.perf_counter() - t0

    def expert(self, seed: int) -> ExpertVerdict:
        """Whether the scripted expert solves ``seed`` (the protocol's filter)."""
        env = self._new()
        try:
            env.setup_demo(now_ep_num=0, seed=seed, is_test=True, **self.args)
            env.play_once()
            if not env.plan_success:
                return ExpertVerdict(False, "motion plan failed")
            if not env.check_success():
                return ExpertVerdict(False, "expert finished but check_success() is false")
            return ExpertVerdict(True)
        except self._unstable as exc:
            return ExpertVerdict(False, f"unstable scene: {exc}")
        except Exception as exc:  # upstream skips any seed whose expert run raises; the walk caps the streak
            return ExpertVerdict(False, f"expert raised {type(exc).__name__}: {exc}")
        finally:
            env.close_env()

    def start_episode(self, episode: EpisodeTask, settle_steps: int) -> EpisodeStart:
        """Walk to the episode's seed (from the chain's candidate, replaying earlier episodes' walks when the
        scheduler knows no nearer start), then build its scene and word its instruction from that seed."""
        from robotwin.description import generate_episode_descriptions

        self._close_env()  # one SAPIEN scene at a time: the expert's come next
        start = episode.rng or RngStart(seed=episode.seed, base_index=0, state=start_seed(episode.seed))
        skipped: list[SkippedSeed] = []
        seeds = solvable_seeds(
            int(start.state),
            episode.init_state - start.base_index + 1,
            run_seed=episode.seed,
            expert=self.expert,
            max_skips=self.scenes.max_skips,
            skipped=skipped,
        )
        seed = seeds[-1]
        env = self.env = self._new()
        env.setup_demo(now_ep_num=episode.init_state, seed=seed, is_test=True, **self.args)
        descriptions = generate_episode_descriptions(self.task.name, [env.get_info()], 1, seed)
        instruction = random.Random(seed).choice(descriptions[0][self.scenes.instruction_type])
        env.set_instruction(instruction=instruction)
        self.last_obs = env.get_obs()
        return EpisodeStart(
            observation={"observation": self.last_obs},
            next_start=seed + 1,
            seed=seed,
            instruction=instruction,
            notes={"skipped": [(s.seed, s.reason) for s in skipped]} if skipped else {},
        )

    def step(self, action: Any, *, render: bool) -> tuple[dict[str, Any], bool]:
        """One qpos target; success is the runtime's ``eval_success`` (its ``check_success()`` inside the action)."""
        self.env.take_action(action, action_type="qpos")
        if render:
            self.last_obs = self.env.get_obs()
        return {"observation": self.last_obs}, bool(self.env.eval_success)

    def failure(self) -> None:
        """No failure tracker: a RoboTwin task's success is its own ``check_success()``, with no goal predicates to
        follow here, so a failed episode is recorded as ``timeout`` (or ``error`` on a simulator error)."""
        return None

    def video_frame(self) -> Any:
        camera = self.last_obs.get("observation", {}).get(VIDEO_CAMERA, {})
        return camera.get("rgb")

    def close(self) -> None:
        self._close_env()

    def _close_env(self) -> None:
        if self.env is not None:
            env, self.env = self.env, None
            env.close_env()
