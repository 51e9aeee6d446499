"""``builtin:expert``: a scripted pick-and-place controller with simulator access. Not a learned policy.

It reads privileged simulator state (the goal object's and target's bounding boxes, see
:mod:`eval_runner.expert_state`) and the end effector's position, and drives the arm through the
action interface every LIBERO policy uses (7-d OSC_POSE delta + gripper): approach, descend, grasp,
lift, carry, place, release. It does any task whose BDDL goal is one ``On``/``In`` predicate (all of
LIBERO-Spatial and LIBERO-Object); :meth:`ExpertPolicy.check_tasks` refuses any other before the rollout.

``noise`` adds Gaussian noise (std in action units, arm dims only) and ``hesitate`` is the probability
that a step is wasted (no motion, the phase does not advance). Both draw from a generator seeded by
``(seed, task, initial state)``: an episode's actions do not depend on workers, batching or retries.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np

from eval_runner.policies.base import ACTION_DIM, ObservationSpec, Policy
from eval_runner.policies.checks import batch_size
from eval_runner.policies.expert_plan import Episode, Scene, plan_step
from rlinf_bench.errors import PolicyError
from rlinf_bench.suites import TaskInfo

#: What every description of this policy says: it is not a learned policy.
LABEL = "scripted expert with simulator access (reads object poses and BDDL goals; not a learned policy)"
SUPPORTED = ("on", "in")
GAIN = 12.0  # action units per metre of error: OSC moves up to 0.05 m per unit of action
TURN = 2.0  # action units per radian of orientation error: OSC turns up to 0.5 rad per unit of action
_GOAL = re.compile(r"\(:goal\s*(.*)\)\s*\)\s*$", re.S)
_PREDICATE = re.compile(r"\((\w+)((?:\s+[\w.-]+)*)\s*\)")


def goal_predicates(task: TaskInfo) -> list[tuple[str, ...]]:
    """The predicates of a task's BDDL ``(:goal (And ...))``, e.g. ``[("on", "akita_black_bowl_1", "plate_1")]``."""
    try:
        text = task.bddl_file.read_text()
    except OSError as exc:
        raise PolicyError(f"the expert cannot read task {task.name}'s BDDL file {task.bddl_file}: {exc}") from exc
    match = _GOAL.search(text)
    if match is None:
        raise PolicyError(f"task {task.name}: no (:goal ...) section in {task.bddl_file}")
    found = [(m.group(1).lower(), *m.group(2).split()) for m in _PREDICATE.finditer(match.group(1))]
    return [p for p in found if p[0] != "and"]


def check_task(task: TaskInfo) -> None:
    """Raise PolicyError naming the predicate unless the goal is one On/In of an object or region."""
    preds = goal_predicates(task)
    bad = [p for p in preds if p[0] not in SUPPORTED or len(p) != 3]
    if bad or len(preds) != 1:
        named = ", ".join(f"({' '.join(p)})" for p in (bad or preds))
        raise PolicyError(
            f"builtin:expert cannot do task {task.suite}/{task.task_id} ({task.name}): its goal has {named}; "
            f"the expert does exactly one On/In pick-and-place (LIBERO-Spatial, LIBERO-Object). "
            f"Choose such tasks with --tasks or use another policy"
        )


def episode_seed(seed: int, episode_id: str) -> list[int]:
    """The generator seed of an episode: ``(seed, sha256(task and initial state))``; a retry replays it."""
    key = re.sub(r"-a\d+$", "", episode_id)
    return [seed, int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")]


class ExpertPolicy(Policy):
    """The scripted pick-and-place expert (see the module docstring)."""

    obs_spec = ObservationSpec(cameras=(), proprio=("robot0_eef_pos", "robot0_eef_quat"), privileged=True)

    def __init__(
        self, *, noise: float = 0.0, hesitate: float = 0.0, seed: int = 0, spec: str = "builtin:expert"
    ) -> None:
        if not 0.0 <= noise <= 5.0:
            raise PolicyError(f"policy spec {spec!r}: noise={noise} must be between 0 and 5 (action units)")
        if not 0.0 <= hesitate < 1.0:
            raise PolicyError(f"policy spec {spec!r}: hesitate={hesitate} must be in [0, 1)")
        self.noise, self.hesitate, self.seed, self.spec = noise, hesitate, seed, spec
        #: sha256 of the checkpoint's settings file when they came from one (``settings=checkpoint``)
        self.settings_sha256: str | None = None
        self._episodes: dict[str, Episode] = {}

    def check_tasks(self, tasks: list[TaskInfo]) -> None:
        for task in tasks:
            check_task(task)

    def reset(self, episode_ids: list[str]) -> None:
        for episode_id in episode_ids:
            self._episodes.pop(episode_id, None)

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        batch_size(obs)
        if "privileged_state" not in obs:
            raise PolicyError("builtin:expert got no privileged_state: it runs only in the LIBERO workers")
        out = np.empty((len(obs["episode_id"]), ACTION_DIM), dtype=np.float32)
        for row, episode_id in enumerate(obs["episode_id"]):
            ep = self._episodes.get(episode_id)
            if ep is None:
                ep = self._episodes[episode_id] = Episode(np.random.default_rng(episode_seed(self.seed, episode_id)))
            out[row] = self._step(
                ep, {key: obs[key][row] for key in self.obs_spec.proprio}, obs["privileged_state"][row]
            )
        return out

    def phase(self, episode_id: str) -> str | None:
        """The phase episode ``episode_id`` is in (``eval_runner.policies.expert_plan.PHASES``), None before its
        first step."""
        ep = self._episodes.get(episode_id)
        return ep.phase if ep is not None else None

    def _step(self, ep: Episode, proprio: dict[str, np.ndarray], state: np.ndarray) -> np.ndarray:
        # draws happen every step in a fixed order, so the noise sequence is the episode's alone
        wasted = ep.rng.random() < self.hesitate
        jitter = ep.rng.normal(0.0, self.noise, size=3) if self.noise else np.zeros(3)
        eef = np.asarray(proprio["robot0_eef_pos"], np.float64)
        rot = quat_matrix(np.asarray(proprio["robot0_eef_quat"], np.float64))
        if ep.base_rot is None:
            ep.base_rot = rot  # yaw 0: the hand as the episode found it
        target, grip = plan_step(ep, eef, Scene.parse(np.asarray(state, np.float64)))
        action = np.zeros(ACTION_DIM)
        action[-1] = grip
        if wasted:
            ep.ticks = max(0, ep.ticks - 1)
            return action
        action[:3] = np.clip(GAIN * (target - eef) + jitter, -1.0, 1.0)
        if ep.grasp.yaw != 0.0 or ep.turned:
            # turn towards the grasp's yaw about world z; a hand never turned keeps the controller's own goal
            ep.turned = True
            error = orientation_error(_yaw(ep.grasp.yaw) @ ep.base_rot, rot)
            ep.turn_error = float(np.linalg.norm(error))
            action[3:6] = np.clip(TURN * error, -1.0, 1.0)
        return action

    def describe(self) -> dict[str, Any]:
        return {
            "class": type(self).__name__,
            "spec": self.spec,
            "kind": LABEL,
            "noise": self.noise,
            "hesitate": self.hesitate,
            "seed": self.seed,
            "parameters": 0,
            # the checkpoint's content, as a learned policy reports its weights' digest: provenance tells
            # the two demo checkpoints apart by it
            **({"settings_from": "checkpoint", "weights_sha256": self.settings_sha256} if self.settings_sha256 else {}),
        }


def quat_matrix(quat: np.ndarray) -> np.ndarray:
    """The rotation matrix of a unit quaternion in robosuite's (x, y, z, w) order."""
    x, y, z, w = quat / np.linalg.norm(quat)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def orientation_error(goal: np.ndarray, current: np.ndarray) -> np.ndarray:
    """The rotation (axis times angle, world frame, small angles) taking ``current`` to ``goal``: robosuite's
    ``orientation_error``, which its OSC controller itself uses."""
    return 0.5 * sum(np.cross(current[:, i], goal[:, i]) for i in range(3))


def _yaw(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
