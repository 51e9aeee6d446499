"""A stand-in for the RoboTwin runtime's task envs, for the loop's tests without SAPIEN or assets.

It has the methods the RoboTwin scene calls (``setup_demo``, ``play_once``, ``plan_success``,
``check_success``, ``get_info``, ``set_instruction``, ``get_obs``, ``take_action``, ``take_action_cnt``,
``eval_success``, ``close_env``) and behaves deterministically:

- the scripted expert cannot solve every seed (:func:`expert_solves` says which, and why not), so the
  seed walk skips and records some;
- ``get_info`` names the objects the runtime's instruction templates need, so the real
  ``generate_episode_descriptions`` words each episode's instruction from its seed;
- the scene holds 14 joints that each qpos target pulls halfway; the episode succeeds (``eval_success``,
  set inside ``take_action`` as the runtime does) when they reach a target drawn from the seed, and stops
  taking actions at the task's step limit (the runtime's ``_eval_step_limit`` config).

:func:`make_policy` is a policy for it that reaches the target only when its instruction says to grab,
so an episode's outcome follows from its seed through its instruction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from robotwin.config import load_task_config

from eval_runner.envs.robotwin_policies import JOINTS, JointPolicy

#: The objects each task's instruction templates name (a subset of the brief's tasks is enough here).
INFO = {
    "lift_pot": lambda seed: {"{A}": f"060_kitchenpot/base{seed % 2}"},
    "beat_block_hammer": lambda seed: {"{A}": "020_hammer/base0", "{a}": "right" if seed % 2 else "left"},
}
#: Side of the head camera's image (even: H.264 needs it).
IMAGE = (24, 32)


class UnstableSceneError(Exception):
    """What the runtime's UnStableError stands for: objects that do not settle."""


def expert_solves(seed: int) -> tuple[bool, str]:
    """Whether the stand-in's expert solves ``seed`` and, when not, the reason the scene gives."""
    if seed % 5 == 1:
        return False, "unstable scene: objects did not settle"
    if seed % 5 == 3:
        return False, "motion plan failed"
    if seed % 7 == 2:
        return False, "expert finished but check_success() is false"
    return True, ""


class FakeTask:
    """One scene of a task (the runtime's env classes are created once per scene, as here)."""

    task = ""

    def __init__(self) -> None:
        self.seed = -1
        self.played = False
        self.plan_success = False
        self.take_action_cnt = 0
        self.eval_success = False
        self.step_lim = 0
        self.instruction = ""
        self.joints = np.zeros(JOINTS)
        self.target = np.zeros(JOINTS)

    def setup_demo(self, now_ep_num: int, seed: int, is_test: bool, **kwargs: Any) -> None:
        # the keyword arguments are build_task_args', read from the runtime's packaged configs
        missing = {"task_name", "left_robot_file", "planner_backend", "eval_mode"} - set(kwargs)
        if missing or kwargs["task_name"] != self.task or not is_test:
            raise AssertionError(f"setup_demo got {sorted(kwargs)} for {self.task} (missing {sorted(missing)})")
        if seed % 5 == 1:
            raise UnstableSceneError("objects did not settle")
        self.seed = seed
        self.step_lim = int(load_task_config("_eval_step_limit")[self.task])
        rng = np.random.default_rng(seed)
        self.joints = rng.uniform(-1, 1, JOINTS)
        self.target = rng.uniform(-1, 1, JOINTS)

    def play_once(self) -> None:
        self.played = True
        self.plan_success = self.seed % 5 != 3

    def check_success(self) -> bool:
        return self.played and expert_solves(self.seed)[0]

    def get_info(self) -> dict[str, str]:
        return INFO[self.task](self.seed)

    def set_instruction(self, instruction: str) -> None:
        self.instruction = instruction

    def get_obs(self) -> dict[str, Any]:
        level = int(255 * (1 + np.tanh(self.joints[0])) / 2)
        image = np.full((*IMAGE, 3), level, dtype=np.uint8)
        return {
            "observation": {"head_camera": {"rgb": image}},
            "joint_action": {"vector": self.joints.copy()},
            "endpose": {"target": self.target.copy()},
        }

    def take_action(self, action: Any, action_type: str = "qpos") -> None:
        if self.take_action_cnt == self.step_lim or self.eval_success:
            return
        if action_type != "qpos" or np.shape(action) != (JOINTS,):
            raise AssertionError(f"take_action got {action_type} {np.shape(action)}")
        self.take_action_cnt += 1
        self.joints = self.joints + 0.5 * (np.asarray(action) - self.joints)
        if np.max(np.abs(self.joints - self.target)) < 0.01:
            self.eval_success = True

    def close_env(self, clear_cache: bool = False) -> None:
        self.played = False


class FakeRuntime:
    """The stand-in's :class:`eval_runner.envs.robotwin_env.Runtime`."""

    def task_class(self, task: str) -> type[FakeTask]:
        if task not in INFO:
            raise AssertionError(f"the stand-in has no task {task!r} (it has {sorted(INFO)})")
        return type(task, (FakeTask,), {"task": task})

    def unstable_error(self) -> type[Exception]:
        return UnstableSceneError


RUNTIME = FakeRuntime()
#: ``RoboTwinOptions(runtime=...)`` naming the stand-in.
SPEC = f"{__name__}:RUNTIME"


class ReachWhenToldPolicy(JointPolicy):
    """Chunks of 20 targets: the scene's target when the instruction says to grab, else the joints held."""

    def __init__(self) -> None:
        self.episodes: list[str] = []

    def reset(self, episode_ids: list[str]) -> None:
        self.episodes.extend(episode_ids)

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        rows = []
        for o, text in zip(obs["observation"], obs["task_description"], strict=True):
            goal = o["endpose"]["target"] if text.startswith("Grab") else o["joint_action"]["vector"]
            rows.append(np.repeat(np.asarray(goal)[None, :], 20, axis=0))
        return np.stack(rows)


def make_policy(checkpoint_dir: Path | None = None) -> ReachWhenToldPolicy:
    """``python:tests.robotwin.fake_runtime:make_policy``."""
    return ReachWhenToldPolicy()


def fake_assets(root: Path) -> Path:
    """A folder the runtime's validator accepts (layout only), with the embodiment config build_task_args reads."""
    for sub in ("background_texture", "objects", "embodiments/aloha-agilex"):
        (root / "assets" / sub).mkdir(parents=True, exist_ok=True)
    (root / "assets" / "embodiments" / "aloha-agilex" / "config.yml").write_text("robot: stand-in\n")
    return root
