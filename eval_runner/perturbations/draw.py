"""Which perturbation an episode plays, and the random generator its parameters are drawn from.

The generator is seeded from a hash of (run seed, suite, task, initial state, axis, level) and nothing
else: not the worker, the attempt, the order episodes run in, or what other episodes drew. A re-run, a
resumed run or a run on another worker count draws the same parameters. It never touches numpy's global
RNG, which LIBERO's resets read (the reference RNG chain of :mod:`eval_runner.scheduler`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from rlinf_bench.contracts.robustness import PerturbationAxis

__all__ = ["AxisLevel", "episode_generator", "scene_generator"]


@dataclass(frozen=True)
class AxisLevel:
    """One perturbed episode's axis and level (what the parent schedules; the worker draws the rest)."""

    axis: PerturbationAxis
    level: int

    @property
    def tag(self) -> str:
        """``camera2``: part of the episode's id."""
        return f"{self.axis.value}{self.level}"


def episode_generator(seed: int, suite: str, task_id: int, init_state: int, axis: AxisLevel) -> np.random.Generator:
    """The generator of one perturbed episode's draws (see the module docstring)."""
    key = f"{seed}/{suite}/{task_id}/{init_state}/{axis.axis.value}/{axis.level}"
    digest = hashlib.sha256(key.encode()).digest()
    return np.random.default_rng([int.from_bytes(digest[i : i + 8], "little") for i in range(0, 32, 8)])


def scene_generator(seed: int, suite: str, task_id: int, axis: AxisLevel) -> np.random.Generator:
    """The generator of what a (task, axis, level) shares over its initial states: the layout's distractors,
    which one scene per (task, level) holds. Drawn from (run seed, suite, task, axis, level) only."""
    key = f"{seed}/{suite}/{task_id}/scene/{axis.axis.value}/{axis.level}"
    digest = hashlib.sha256(key.encode()).digest()
    return np.random.default_rng([int.from_bytes(digest[i : i + 8], "little") for i in range(0, 32, 8)])
