"""The RoboTwin env kind's scene: one task env, driven the way the official evaluation drives it.

Per seed: the task's scripted expert plays the scene (``setup_demo(is_test=True)``, ``play_once()``)
and the seed counts only when ``plan_success and check_success()``; then the scene is rebuilt from
the same seed for the policy, which acts until the env's own ``check_success()`` fires inside
``take_action`` (``eval_success``) or its ``step_lim`` (the task's ``_eval_step_limit``) is reached.

Everything here needs the RoboTwin assets and SAPIEN; it is only reached after
:func:`eval_runner.envs.robotwin_assets.resolve_assets` has validated the snapshot.
"""

from __future__ import annotations

import importlib
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from eval_runner.envs.robotwin_assets import AssetsRoot
from eval_runner.envs.robotwin_policies import JOINTS
from eval_runner.envs.robotwin_seeds import ExpertVerdict
from eval_runner.policies.base import Policy

__all__ = ["EpisodeOutcome", "TaskEnv", "build_task_args"]

HEAD_CAMERA = "D435"


@dataclass(frozen=True)
class EpisodeOutcome:
    """What one policy episode produced."""

    success: bool
    steps: int
    instruction: str


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


class TaskEnv:
    """The runtime's env class for one task, created fresh for every scene as upstream does."""

    def __init__(self, task: str, args: dict[str, Any], assets: AssetsRoot) -> None:
        self.task = task
        self.args = args
        # The task modules resolve meshes and textures through ASSETS_PATH (VectorEnv sets it the same way).
        os.environ["ASSETS_PATH"] = str(assets.root)
        os.environ["ROBOTWIN_ASSETS_ROOT"] = str(assets.root)
        self._module = importlib.import_module(f"robotwin.envs.{task}")
        from robotwin.envs.utils.create_actor import UnStableError

        self._unstable: type[Exception] = UnStableError

    def _new(self) -> Any:
        return getattr(self._module, self.task)()

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
        except Exception as exc:  # upstream skips any seed whose expert run raises; SeedWalk caps the streak
            return ExpertVerdict(False, f"expert raised {type(exc).__name__}: {exc}")
        finally:
            env.close_env()

    def episode(self, seed: int, episode_index: int, policy: Policy, instruction_type: str) -> EpisodeOutcome:
        """Roll ``policy`` out on ``seed`` until success or the task's step limit (a batch of one row)."""
        from robotwin.description import generate_episode_descriptions

        env = self._new()
        try:
            env.setup_demo(now_ep_num=episode_index, seed=seed, is_test=True, **self.args)
            descriptions = generate_episode_descriptions(self.task, [env.get_info()], 1, seed)
            instruction = random.Random(seed).choice(descriptions[0][instruction_type])
            env.set_instruction(instruction=instruction)
            episode_id = f"{self.task}/{episode_index}/{seed}"
            policy.reset([episode_id])
            while env.take_action_cnt < env.step_lim and not env.eval_success:
                batch = {"observation": [env.get_obs()], "task_description": [instruction], "episode_id": [episode_id]}
                chunks = np.asarray(policy.act(batch), dtype=np.float64)
                if chunks.ndim != 3 or chunks.shape[0] != 1 or chunks.shape[2] != JOINTS or chunks.shape[1] == 0:
                    raise ValueError(
                        f"policy returned actions of shape {chunks.shape}; expected [1, T, {JOINTS}] qpos targets"
                    )
                chunk = chunks[0]
                for action in chunk:
                    env.take_action(action, action_type="qpos")
                    if env.eval_success or env.take_action_cnt >= env.step_lim:
                        break
            return EpisodeOutcome(
                success=bool(env.eval_success), steps=int(env.take_action_cnt), instruction=instruction
            )
        finally:
            env.close_env()
