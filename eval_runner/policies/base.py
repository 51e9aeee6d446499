"""The policy interface the evaluation loop talks to.

A policy declares the observations it consumes (:class:`ObservationSpec`) so the environment
renders only those cameras: on a CPU, rendering is ~90 % of a LIBERO step, so a policy that needs
no images runs at physics speed.

The loop calls :meth:`Policy.act` exactly once per vector step with a *batch* of observations,
one row per active episode. An observation batch is a ``dict[str, Any]``:

- each requested camera ``<name>_image`` (e.g. ``agentview_image``): ``uint8`` array ``[B, H, W, 3]``;
- each requested proprioceptive key (e.g. ``robot0_eef_pos``): ``float32`` array ``[B, D]``;
- ``task_description``: ``list[str]`` of length B (the LIBERO language instruction);
- ``episode_id``: ``list[str]`` of length B, stable for an episode, so stateful policies
  (action chunking) can keep per-episode state;
- ``privileged_state`` (only when ``obs_spec.privileged``): ``float32 [B, 110]``, simulator state for the
  scripted expert (:mod:`eval_runner.expert_state`).

The policy returns actions as a ``float32`` array ``[B, 7]`` (LIBERO's OSC_POSE delta + gripper).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.suites import TaskInfo

ACTION_DIM = 7
# Gripper open, no motion: what LIBERO settle steps and "no-op" mean.
SETTLE_ACTION = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0)


class ObservationSpec(BaseModel):
    """Which observations a policy consumes; the environment produces exactly these."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cameras: tuple[str, ...] = Field(default=(), description="e.g. ('agentview', 'robot0_eye_in_hand')")
    resolution: int | None = Field(
        default=None,
        ge=16,
        le=1024,
        description="Square camera resolution in pixels; None: the run's protocol decides (256 for oft and rlinf)",
    )
    proprio: tuple[str, ...] = Field(
        default=("robot0_eef_pos", "robot0_eef_quat", "robot0_gripper_qpos"),
        description="Proprioceptive observation keys",
    )

    privileged: bool = Field(
        default=False,
        description=(
            "Add 'privileged_state' (float32 [B, 110]: the world bounding boxes of the goal's object, its target "
            "and the other objects, read from the simulator): for the scripted expert only, never for a learned policy"
        ),
    )

    @property
    def needs_renderer(self) -> bool:
        return bool(self.cameras)


class Policy(ABC):
    """A batched, deterministic-by-default policy."""

    #: observations this policy consumes
    obs_spec: ObservationSpec = ObservationSpec()

    @abstractmethod
    def act(self, obs: dict[str, Any]) -> Any:
        """Return a ``[B, 7]`` float array of actions for a batch of observations."""

    def check_tasks(self, tasks: list[TaskInfo]) -> None:  # noqa: B027 - optional hook
        """Called once before any rollout with the run's tasks; raise PolicyError for a task it cannot do."""

    def reset(self, episode_ids: list[str]) -> None:  # noqa: B027 - optional hook
        """Called when new episodes start, before their first :meth:`act`."""

    def describe(self) -> dict[str, Any]:
        """Provenance of the policy: name, parameters digest, checkpoint it read."""
        return {"class": type(self).__name__}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (connections, GPU memory)."""
