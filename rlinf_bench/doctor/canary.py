"""What the simulator canary prints, as its callers read it: the episodes it played, their fingerprints, the verdict.

``python -m eval_runner.sim_canary --json`` (the Job package, where the simulator is) writes one
:class:`CanaryRun` line; the doctor's ``canary.sim`` check and the ``sim_canary`` probe read it back through the
one canary runner (``rlinf_doctor.canary_runner``). The shapes live here, in the core, so that both sides share
them without the readers importing the simulator's package.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CanaryRun", "CanarySet", "CanaryVerdict", "EpisodePrint", "Fingerprint"]


class CanarySet(BaseModel):
    """Which episodes the canary plays (fixed: a reference is only comparable with its own set)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    suite: str
    tasks: tuple[int, ...]
    states: tuple[int, ...]
    max_steps: int
    fingerprint_steps: tuple[int, ...]
    decimals: int
    seed: int


class EpisodePrint(BaseModel):
    """One canary episode: its outcome and, at each fingerprint step, the sha256 of the rounded simulator state."""

    model_config = ConfigDict(extra="forbid")

    task_id: int
    init_state: int
    success: bool
    steps: int
    state_sha256: dict[str, str] = Field(description="fingerprint step -> sha256 of the rounded qpos+qvel")

    @property
    def key(self) -> str:
        return f"{self.task_id}/{self.init_state}"


class Fingerprint(BaseModel):
    """One play of the canary set: what was played, on which versions, and each episode's fingerprint."""

    model_config = ConfigDict(extra="forbid")

    canary: CanarySet
    versions: dict[str, str]
    episodes: list[EpisodePrint]
    perturbed: dict[str, float] = Field(default_factory=dict)
    wall_s: float = 0.0


class CanaryVerdict(BaseModel):
    """The comparison with the reference: which episodes moved, on which versions on both sides."""

    model_config = ConfigDict(extra="forbid")

    ok: bool
    moved: list[str] = Field(default_factory=list, description="One line per episode that differs")
    versions_here: dict[str, str]
    versions_reference: dict[str, str]
    summary: str


class CanaryRun(BaseModel):
    """What ``python -m eval_runner.sim_canary --json`` prints: the verdict and the fingerprint it judged."""

    model_config = ConfigDict(extra="forbid")

    verdict: CanaryVerdict
    fingerprint: Fingerprint
