"""The shapes of evaluation protocols: a reference evaluation's episode settings (:class:`ProtocolProfile`),
what a run used (:class:`RunProtocol`, in its RunResult) and what a baseline was measured under
(:class:`BaselineProtocol`). The profiles themselves and the comparison live in :mod:`rlinf_bench.protocols`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.contracts.robustness import RobustnessSpec
from rlinf_bench.errors import ConfigError

__all__ = [
    "DEFAULT_PROTOCOL",
    "GREEDY",
    "BaselineProtocol",
    "EpisodeErrorPolicy",
    "ProtocolName",
    "ProtocolProfile",
    "RunProtocol",
    "sampling",
]

GREEDY = "greedy"
#: The profiles ``--protocol`` accepts (rlinf_bench.protocols.PROFILES holds their settings).
ProtocolName = Literal["oft", "rlinf"]
#: The protocol of runs that name none: RLinf v0.3's, the one the default baseline (RLinf's paper numbers)
#: was measured under, so that a default evaluation of an RLinf checkpoint gets a verdict against the paper.
DEFAULT_PROTOCOL: ProtocolName = "rlinf"
EpisodeErrorPolicy = Literal["fail-run", "fail-episode"]


def sampling(temperature: float) -> str:
    """The decoding label of sampled actions, e.g. ``sampling (temperature 1.6)``."""
    return f"sampling (temperature {temperature:g})"


class ProtocolProfile(BaseModel):
    """A reference evaluation's episode settings; ``--protocol NAME`` applies them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    max_steps: dict[str, int] = Field(description="Policy steps per episode, per suite id")
    settle_steps: int = Field(ge=0, description="No-op steps after reset, not counted in max_steps")
    settle_gripper: float = Field(description="Gripper value of the settle action (-1 open, 0 neutral)")
    resolution: int = Field(ge=16, le=1024, description="Camera render resolution when the policy names none")
    decoding: str = Field(description="How the reference decodes actions: greedy or sampling (temperature T)")
    source: str

    def max_steps_for(self, suite: str) -> int:
        """The profile's max steps for ``suite``; a suite it does not cover is a ConfigError."""
        try:
            return self.max_steps[suite]
        except KeyError:
            raise ConfigError(
                f"protocol {self.name!r} defines no max steps for suite {suite!r} "
                f"(it covers {', '.join(self.max_steps)}); pass --max-steps"
            ) from None


class RunProtocol(BaseModel):
    """What one run actually used (recorded in its RunResult)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The profile the run started from")
    overrides: list[str] = Field(default_factory=list, description="Settings given explicitly on top of the profile")
    max_steps: int = Field(ge=1)
    settle_steps: int = Field(ge=0)
    settle_gripper: float = -1.0
    render_resolution: int | None = Field(default=None, description="Camera resolution; None: no camera rendered")
    decoding: str = Field(default=GREEDY, description="What the policy says about its decoding")
    rng_scheme: str = Field(default="", description="How episodes were seeded (docs/evaluation.md)")
    on_episode_error: EpisodeErrorPolicy = "fail-run"
    robustness: RobustnessSpec | None = Field(
        default=None, description="The perturbed episodes the run played beside its standard ones; None: none"
    )


class BaselineProtocol(BaseModel):
    """What a published number was measured under (in rlinf_bench/data/baselines/*.yaml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Closest profile, e.g. rlinf or oft")
    max_steps: dict[str, int] = Field(description="Per suite id")
    settle_steps: int = Field(ge=0)
    settle_gripper: float
    decoding: str
    source: str = Field(min_length=1, description="The files the settings were read from")
