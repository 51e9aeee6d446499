"""RoboTwin's policies, in the one policy registry (:mod:`eval_runner.policies.factory`).

A RoboTwin suite is driven in the runtime's ``qpos`` action space: 14 joint targets (left arm 6 +
gripper, right arm 6 + gripper), a chunk of T of them per observation. Its policies are
:class:`JointPolicy` instances, the :class:`~eval_runner.policies.base.Policy` interface with that
batch and action shape:

- ``builtin:hold`` (registered beside ``builtin:zero``, ``random``, ``demo``): keeps every joint where
  it is (a do-nothing reference; it solves nothing).
- ``python:MODULE:FACTORY``: ``FACTORY(checkpoint_dir=..., **options)`` returns a :class:`JointPolicy`,
  or any object with ``reset()`` and ``act(obs, instruction) -> [T, 14]`` (the RoboTwin adapter's
  first interface, still accepted: it is wrapped in :class:`InstructionPolicy`).

The adapter registered for the ``robotwin`` env kind refuses LIBERO's policies (``builtin:demo``,
``builtin:zero``, ``server:``…: 7-d end-effector actions) on RoboTwin suites, and
:func:`~eval_runner.policies.factory.load_policy` refuses ``builtin:hold`` on LIBERO suites.
Nothing here imports the RoboTwin runtime: the registry loads this module in either venv.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from eval_runner.policies.base import ObservationSpec, Policy
from eval_runner.policies.builtin import BUILTINS
from eval_runner.policies.factory import ADAPTERS, take_options
from eval_runner.policies.spec import PolicySpec
from rlinf_bench.errors import PolicyError

__all__ = ["ENV_KIND", "JOINTS", "SPECS", "HoldPolicy", "InstructionPolicy", "JointPolicy", "adapt"]

#: The env kind these policies drive (``eval_runner.envs.kinds``).
ENV_KIND = "robotwin"
#: Joint targets per action: left arm 6 + gripper, right arm 6 + gripper.
JOINTS = 14
#: What a RoboTwin suite accepts, for error messages.
SPECS = ("builtin:hold", "python:MODULE:FACTORY")


class JointPolicy(Policy):
    """A policy for RoboTwin suites.

    :meth:`act` gets a batch ``{"observation": [get_obs() dict], "task_description": [str],
    "episode_id": [str]}`` (one row per ready scene: the loop batches the rows of its workers; each
    row's instruction is its episode's own) and returns ``[B, T, 14]`` qpos targets for the next T steps
    of each row (or ``[B, 14]``, one step).
    """

    env_kind = ENV_KIND
    obs_spec = ObservationSpec(cameras=(), proprio=())  # the runtime's get_obs() renders its own cameras


class HoldPolicy(JointPolicy):
    """Repeats the current joint state as the target: one step at a time, nothing moves."""

    def __init__(self, spec: str = "builtin:hold") -> None:
        self.spec = spec

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        """Each row's observed ``joint_action.vector`` (14 values) as a one-step chunk."""
        states = [np.asarray(o["joint_action"]["vector"], dtype=np.float64) for o in obs["observation"]]
        return np.stack(states)[:, None, :]

    def describe(self) -> dict[str, Any]:
        return {"class": type(self).__name__, "spec": self.spec, "parameters": 0}


class InstructionPolicy(JointPolicy):
    """A factory's object with ``reset()`` and ``act(obs, instruction) -> [T, 14]``, as a JointPolicy."""

    def __init__(self, inner: Any, spec: str) -> None:
        self.inner = inner
        self.spec = spec

    def reset(self, episode_ids: list[str]) -> None:
        self.inner.reset()

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        rows = zip(obs["observation"], obs["task_description"], strict=True)
        return np.stack([np.asarray(self.inner.act(o, text), dtype=np.float64) for o, text in rows])

    def describe(self) -> dict[str, Any]:
        described = getattr(self.inner, "describe", None)
        base = described() if callable(described) else {"class": type(self.inner).__name__}
        return {**base, "spec": self.spec, "interface": "reset(), act(obs, instruction)"}

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


@BUILTINS.register("hold")
def _hold(spec: PolicySpec, checkpoint_dir: Path | None) -> Policy:
    take_options(spec, {})
    return HoldPolicy(spec.raw)


@ADAPTERS.register(ENV_KIND)
def adapt(policy: Any, spec: PolicySpec) -> Policy:
    """What a scheme loader produced, as a JointPolicy; a PolicyError for what cannot drive RoboTwin."""
    if isinstance(policy, JointPolicy):
        return policy
    if isinstance(policy, Policy):
        raise PolicyError(
            f"policy {spec.raw!r} cannot drive a RoboTwin suite ({JOINTS}-d joint actions); use one of: "
            f"{', '.join(SPECS)}"
        )
    if callable(getattr(policy, "act", None)) and callable(getattr(policy, "reset", None)):
        return InstructionPolicy(policy, spec.raw)
    raise PolicyError(
        f"policy spec {spec.raw!r}: the factory returned a {type(policy).__name__}; for a RoboTwin suite it must "
        "return an eval_runner.envs.robotwin_policies.JointPolicy or an object with reset() and act(obs, text)"
    )
