"""The official RoboTwin 2.0 seed protocol.

Run ``s`` starts at seed ``100000 * (1 + s)`` and walks upward one seed at a time. Before the policy
sees a seed, the task's scripted expert plays it; a seed the expert cannot solve (an unstable scene,
a failed motion plan, or a finished plan the task's own ``check_success()`` rejects) is skipped and
recorded, so every evaluated episode is known to be solvable. The walk stops when the requested
number of episodes have a seed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from rlinf_bench.errors import ConfigError, SimulatorError
from rlinf_bench.robotwin import SEED_STRIDE

__all__ = ["ExpertVerdict", "SeedWalk", "SkippedSeed", "start_seed"]


def start_seed(run_seed: int) -> int:
    """First candidate seed of run seed ``run_seed``: ``100000 * (1 + run_seed)``."""
    if run_seed < 0:
        raise ConfigError(
            f"--seed {run_seed}: RoboTwin run seeds are >= 0 (the protocol starts at 100000 * (1 + seed))"
        )
    return SEED_STRIDE * (1 + run_seed)


@dataclass(frozen=True)
class ExpertVerdict:
    """What the scripted expert made of one seed."""

    solvable: bool
    reason: str = ""


@dataclass(frozen=True)
class SkippedSeed:
    """A seed left out because the expert could not solve it, and why."""

    seed: int
    reason: str


@dataclass
class SeedWalk:
    """Walks the seeds of one task in one run, asking ``expert`` about each candidate.

    Iterating yields the accepted seeds in order; :attr:`skipped` records the others. The walk refuses
    to leave the run's block of ``SEED_STRIDE`` seeds (it would reuse the next run's seeds) and gives up
    after ``max_skips`` skips in a row, which means a broken task or asset set rather than hard seeds.
    """

    run_seed: int
    episodes: int
    expert: Callable[[int], ExpertVerdict]
    max_skips: int = 200
    skipped: list[SkippedSeed] = field(default_factory=list)
    accepted: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.episodes < 1:
            raise ConfigError(f"--trials {self.episodes}: at least one episode per task")
        if self.max_skips < 1:
            raise ConfigError(f"max_skips={self.max_skips} must be >= 1")

    def __iter__(self) -> Iterator[int]:
        first = start_seed(self.run_seed)
        seed, in_a_row = first, 0
        while len(self.accepted) < self.episodes:
            if seed >= first + SEED_STRIDE:
                raise SimulatorError(
                    f"run seed {self.run_seed}: walked past {first + SEED_STRIDE - 1} without {self.episodes} "
                    "expert-solvable seeds; that block belongs to the next run"
                )
            verdict = self.expert(seed)
            if verdict.solvable:
                self.accepted.append(seed)
                in_a_row = 0
                yield seed
            else:
                self.skipped.append(SkippedSeed(seed, verdict.reason or "expert failed"))
                in_a_row += 1
                if in_a_row >= self.max_skips:
                    raise SimulatorError(
                        f"the expert failed on {in_a_row} seeds in a row (last {seed}: {verdict.reason}); "
                        "the task or its assets are broken, not the seeds"
                    )
            seed += 1
