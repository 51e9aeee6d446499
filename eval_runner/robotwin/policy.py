"""Policies for RoboTwin runs: 14-d joint targets per observation (the runtime's ``qpos`` action space).

- ``builtin:hold``: keeps every joint where it is (a do-nothing reference; it solves nothing).
- ``python:MODULE:FACTORY``: ``FACTORY(checkpoint_dir=..., **options)`` returns an object with
  ``reset()`` and ``act(obs, instruction) -> [T, 14]`` (see :class:`eval_runner.robotwin.env.RoboTwinPolicy`).

LIBERO's policy schemes (``builtin:demo``, ``server:``) speak LIBERO's 7-d end-effector actions and
are not accepted here.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import numpy as np

from eval_runner.policies.spec import parse_spec
from eval_runner.robotwin.env import RoboTwinPolicy
from rlinf_bench.errors import PolicyError

__all__ = ["HoldPolicy", "load_policy"]

SCHEMES = ("builtin:hold", "python:MODULE:FACTORY")


class HoldPolicy:
    """Repeats the current joint state as the target: one step at a time, nothing moves."""

    def reset(self) -> None:
        """Stateless."""

    def act(self, obs: dict[str, Any], instruction: str) -> np.ndarray:
        """The observed ``joint_action.vector`` (14 values) as a one-step chunk."""
        state = np.asarray(obs["joint_action"]["vector"], dtype=np.float64)
        return state.reshape(1, -1)


def load_policy(raw: str, checkpoint_dir: Path | None = None) -> RoboTwinPolicy:
    """The policy a spec names; a clear :class:`PolicyError` for schemes RoboTwin cannot use."""
    spec = parse_spec(raw)
    if spec.scheme == "builtin" and spec.target == "hold":
        return HoldPolicy()
    if spec.scheme == "python":
        module_name, sep, attr = spec.target.rpartition(":")
        if not sep or not module_name:
            raise PolicyError(f"policy spec {raw!r}: expected python:MODULE:FACTORY")
        try:
            factory = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise PolicyError(f"policy spec {raw!r}: cannot load {module_name}:{attr}: {exc}") from exc
        policy = factory(checkpoint_dir=checkpoint_dir, **spec.options)
        if not (callable(getattr(policy, "act", None)) and callable(getattr(policy, "reset", None))):
            raise PolicyError(f"policy spec {raw!r}: the factory must return an object with reset() and act(obs, text)")
        return policy
    raise PolicyError(
        f"policy {raw!r} cannot drive a RoboTwin suite (14-d joint actions); use one of: {', '.join(SCHEMES)}"
    )
