"""The official RoboTwin 2.0 seed protocol.

Run ``s`` starts at seed ``100000 * (1 + s)`` and walks upward one seed at a time. Before the policy
sees a seed, the task's scripted expert plays it; a seed the expert cannot solve (an unstable scene,
a failed motion plan, or a finished plan the task's own ``check_success()`` rejects) is skipped and
recorded, so every evaluated episode is known to be solvable. Episode *i* of a task takes the *i*-th
solvable seed; its walk starts one seed after episode *i - 1*'s, which is the link of the scheduler's
chain for RoboTwin (:mod:`eval_runner.scheduler`): a worker that does not know it walks the earlier
episodes' seeds first, so every episode gets the seed the one-scene-at-a-time protocol gives it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rlinf_bench.errors import ConfigError, SimulatorError
from rlinf_bench.robotwin import SEED_STRIDE

__all__ = ["MAX_SKIPS", "ExpertVerdict", "SkippedSeed", "solvable_seeds", "start_seed"]

#: Skips in a row after which a walk gives up: a broken task or asset set, not hard seeds.
MAX_SKIPS = 200


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


def solvable_seeds(
    first: int,
    count: int,
    *,
    run_seed: int,
    expert: Callable[[int], ExpertVerdict],
    max_skips: int = MAX_SKIPS,
    skipped: list[SkippedSeed] | None = None,
) -> list[int]:
    """The next ``count`` seeds from ``first`` upward that ``expert`` solves; the others go to ``skipped``.

    The walk refuses to leave run seed ``run_seed``'s block of ``SEED_STRIDE`` seeds (it would reuse the
    next run's seeds) and gives up after ``max_skips`` skips in a row, which means a broken task or asset
    set rather than hard seeds.
    """
    if count < 1:
        raise ConfigError(f"--trials {count}: at least one episode per task")
    if max_skips < 1:
        raise ConfigError(f"max_skips={max_skips} must be >= 1")
    end = start_seed(run_seed) + SEED_STRIDE
    record = skipped if skipped is not None else []
    accepted: list[int] = []
    seed, in_a_row = first, 0
    while len(accepted) < count:
        if seed >= end:
            raise SimulatorError(
                f"run seed {run_seed}: walked past {end - 1} without {count} expert-solvable seeds from {first}; "
                "that block belongs to the next run"
            )
        verdict = expert(seed)
        if verdict.solvable:
            accepted.append(seed)
            in_a_row = 0
        else:
            record.append(SkippedSeed(seed, verdict.reason or "expert failed"))
            in_a_row += 1
            if in_a_row >= max_skips:
                raise SimulatorError(
                    f"the expert failed on {in_a_row} seeds in a row (last {seed}: {verdict.reason}); "
                    "the task or its assets are broken, not the seeds"
                )
        seed += 1
    return accepted
