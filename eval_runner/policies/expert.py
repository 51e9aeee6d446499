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
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eval_runner.policies.base import ACTION_DIM, ObservationSpec, Policy
from eval_runner.policies.checks import batch_size
from rlinf_bench.errors import PolicyError
from rlinf_bench.suites import TaskInfo

#: What every description of this policy says: it is not a learned policy.
LABEL = "scripted expert with simulator access (reads object poses and BDDL goals; not a learned policy)"
SUPPORTED = ("on", "in")
OPEN, CLOSE = -1.0, 1.0
GAIN = 12.0  # action units per metre of error: OSC moves up to 0.05 m per unit of action
GRIP_WIDTH = 0.07  # objects wider than this (across the fingers, y) are grasped by their rim
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


@dataclass
class _Episode:
    rng: np.random.Generator
    phase: str = "approach"
    ticks: int = 0  # steps spent in the phase
    offset: np.ndarray = field(default_factory=lambda: np.zeros(3))  # object centre minus eef, once held
    hang: float = 0.0  # eef height above the object's bottom, once held
    carry_z: float = 0.0  # the eef height to carry at, fixed when the grasp closes


def episode_seed(seed: int, episode_id: str) -> list[int]:
    """The generator seed of an episode: ``(seed, sha256(task and initial state))``; a retry replays it."""
    key = re.sub(r"-a\d+$", "", episode_id)
    return [seed, int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")]


class ExpertPolicy(Policy):
    """The scripted pick-and-place expert (see the module docstring)."""

    obs_spec = ObservationSpec(cameras=(), proprio=("robot0_eef_pos", "robot0_gripper_qpos"), privileged=True)

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
        self._episodes: dict[str, _Episode] = {}

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
                ep = self._episodes[episode_id] = _Episode(np.random.default_rng(episode_seed(self.seed, episode_id)))
            out[row] = self._step(ep, obs["robot0_eef_pos"][row], obs["privileged_state"][row])
        return out

    def _step(self, ep: _Episode, eef: np.ndarray, state: np.ndarray) -> np.ndarray:
        # draws happen every step in a fixed order, so the noise sequence is the episode's alone
        wasted = ep.rng.random() < self.hesitate
        jitter = ep.rng.normal(0.0, self.noise, size=3) if self.noise else np.zeros(3)
        target, grip = plan_step(ep, np.asarray(eef, np.float64), np.asarray(state, np.float64))
        action = np.zeros(ACTION_DIM)
        action[-1] = grip
        if wasted:
            ep.ticks = max(0, ep.ticks - 1)
            return action
        action[:3] = np.clip(GAIN * (target - eef) + jitter, -1.0, 1.0)
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


def plan_step(ep: _Episode, eef: np.ndarray, state: np.ndarray) -> tuple[np.ndarray, float]:
    """Advance the episode's phase and return (eef target position, gripper command)."""
    obj_lo, obj_hi, tgt_lo, tgt_hi = state[0:3], state[3:6], state[6:9], state[9:12]
    centre = (obj_lo + obj_hi) / 2
    grasp = grasp_point(obj_lo, obj_hi)
    ep.ticks += 1
    if ep.phase == "approach":
        target = grasp + np.array([0.0, 0.0, 0.08])
        if np.linalg.norm(target - eef) < 0.015 or ep.ticks > 60:
            ep.phase, ep.ticks = "descend", 0
        return target, OPEN
    if ep.phase == "descend":
        if np.linalg.norm(grasp - eef) < 0.008 or ep.ticks > 30:
            ep.phase, ep.ticks = "grasp", 0
        return grasp, OPEN
    if ep.phase == "grasp":
        if ep.ticks >= 10:
            ep.phase, ep.ticks, ep.offset, ep.hang = "lift", 0, centre - eef, eef[2] - obj_lo[2]
            # high enough to clear the target (and what stands around it) with the object hanging below
            ep.carry_z = max(tgt_hi[2] + ep.hang + 0.06, eef[2] + 0.08)
        return grasp, CLOSE
    carry_z = ep.carry_z
    over = (tgt_lo + tgt_hi) / 2 - np.array([ep.offset[0], ep.offset[1], 0.0])
    if ep.phase == "lift":
        target = np.array([eef[0], eef[1], carry_z])
        if eef[2] > carry_z - 0.02 or ep.ticks > 40:
            ep.phase, ep.ticks = "carry", 0
        return target, CLOSE
    if ep.phase == "carry":
        target = np.array([over[0], over[1], carry_z])
        if np.linalg.norm((target - eef)[:2]) < 0.01 or ep.ticks > 60:
            ep.phase, ep.ticks = "place", 0
        return target, CLOSE
    if ep.phase == "place":
        target = np.array([over[0], over[1], tgt_hi[2] + ep.hang + 0.005])
        if obj_lo[2] < tgt_hi[2] + 0.02 or ep.ticks > 40:
            ep.phase, ep.ticks = "release", 0
        return target, CLOSE
    if ep.phase == "release":
        if ep.ticks >= 8:
            ep.phase, ep.ticks = "retreat", 0
        return eef.copy(), OPEN
    return eef + np.array([0.0, 0.0, 0.05]), OPEN


def grasp_point(obj_lo: np.ndarray, obj_hi: np.ndarray) -> np.ndarray:
    """Where the fingertips close: the centre for narrow objects, the rim (+y side) for wide ones (bowls)."""
    centre = (obj_lo + obj_hi) / 2
    height = obj_hi[2] - obj_lo[2]
    width_y = obj_hi[1] - obj_lo[1]
    point = centre.copy()
    if width_y > GRIP_WIDTH:
        point[1] = obj_hi[1] - 0.012  # the wall between the fingers
        point[2] = obj_hi[2] - min(0.03, height / 2)
    else:
        point[2] = obj_hi[2] - min(0.035, height / 2)
    return point
