"""Assemble a RunResult from the episodes finished so far (called after every episode)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from rlinf_bench.contracts import EpisodeResult, EvalRun, Provenance, RunResult, RunStatus, TaskResult, Timings
from rlinf_bench.protocols import RunProtocol
from rlinf_bench.provenance import weights_digest


class EvalTask(Protocol):
    """A task as the results name it, whatever its env kind (LIBERO's TaskInfo, RoboTwin's RoboTwinTask)."""

    @property
    def task_id(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def language(self) -> str: ...


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def provenance_with_policy(provenance: Provenance, description: dict[str, Any]) -> Provenance:
    """``provenance`` with the loaded policy's ``describe()`` and the weights digest it names."""
    extra = {"policy": description, **{k: v for k, v in provenance.extra.items() if k != "policy"}}
    return provenance.model_copy(update={"extra": extra, "checkpoint_sha256": weights_digest(description)})


@dataclass
class RunCounters:
    """Timings accumulated by the rollout loop."""

    env_setup_s: float = 0.0
    env_steps: int = 0
    policy_calls: int = 0
    vector_steps: int = 0
    policy_s: float = 0.0
    sim_s: float = 0.0
    batch_rows: int = 0  # sum of batch sizes over policy calls (mean batch = batch_rows / policy_calls)
    worker_restarts: int = 0
    chunk_steps: int = 0  # env steps sent as parts of action chunks (executed open loop by the workers)
    resets: int = 0  # episode starts (hard reset, initial state, settle steps)
    scenes_prepared: int = 0  # scenes a waiting worker built before its episode's state was known
    reset_s: float = 0.0  # the workers' time in those starts, summed
    steady_cycles: int = 0  # policy calls during the stepping phases (see batching.SteppingClock)
    steady_s: float = 0.0  # the workers' stepping-phase time, summed and divided by the worker count
    steady_rows: int = 0  # env steps taken in those phases
    steady_sim_s: float = 0.0  # the workers' own env.step time in those phases, likewise divided
    occupied_s: float = 0.0  # batching.OccupancyWindow: while every worker had an episode
    occupied_steps: int = 0
    first_act_at: float = 0.0  # perf_counter of the first policy call
    last_finish_at: float = 0.0  # perf_counter of the last finished episode

    def throughput(self) -> dict[str, float]:
        """Harness figures for provenance: steady-state env steps/s, mean batch, policy calls per vector step."""
        return {
            "vector_steps": self.vector_steps,
            "policy_calls_per_vector_step": self.policy_calls / self.vector_steps if self.vector_steps else 0.0,
            "mean_batch": self.batch_rows / self.policy_calls if self.policy_calls else 0.0,
            "chunk_steps": self.chunk_steps,
            "mean_reset_s": self.reset_s / self.resets if self.resets else 0.0,
            "scenes_prepared": self.scenes_prepared,
            "steady_vector_steps": self.steady_cycles,
            "steady_env_steps_per_s": self.steady_rows / self.steady_s if self.steady_s else 0.0,
            "steady_s_per_vector_step": self.steady_s / self.steady_cycles if self.steady_cycles else 0.0,
            # rollout phase (first policy call to last episode end): stepping plus resets, scene builds
            "rolling_s": max(0.0, self.last_finish_at - self.first_act_at),
            "rolling_env_steps_per_s": self.env_steps / (self.last_finish_at - self.first_act_at)
            if self.last_finish_at > self.first_act_at
            else 0.0,
            # every worker busy (resets included): compares with N processes running the reference loop
            "occupied_s": self.occupied_s,
            "occupied_env_steps_per_s": self.occupied_steps / self.occupied_s if self.occupied_s else 0.0,
            # what the loop adds on top of the simulator: IPC, batching, the policy call, scheduling
            "harness_overhead": (self.steady_s - self.steady_sim_s) / self.steady_sim_s if self.steady_sim_s else 0.0,
        }


@dataclass
class ResultBuilder:
    """Holds the run's identity and finished episodes; :meth:`build` makes a validated RunResult."""

    run: EvalRun
    tasks: Sequence[EvalTask]
    max_steps: int
    settle_steps: int
    provenance: Provenance
    counters: RunCounters = field(default_factory=RunCounters)
    episodes: dict[int, list[EpisodeResult]] = field(default_factory=dict)
    #: perturbed episodes (TaskResult.perturbed), per task: beside the standard ones, never in their counts
    perturbed: dict[int, list[EpisodeResult]] = field(default_factory=dict)
    started_at: str = field(default_factory=utc_now)
    _t0: float = field(default_factory=time.perf_counter)
    protocol: RunProtocol | None = None  # profile, settle gripper, resolution, RNG scheme, error policy

    def add(self, task_id: int, episode: EpisodeResult) -> None:
        """Keep a finished episode: a perturbed one (its ``perturbation`` set) apart from the standard ones."""
        into = self.episodes if episode.perturbation is None else self.perturbed
        into.setdefault(task_id, []).append(episode)

    @property
    def finished(self) -> int:
        """Standard episodes finished (those the success rate counts)."""
        return sum(len(v) for v in self.episodes.values())

    @property
    def finished_all(self) -> int:
        """Every finished episode, perturbed ones included (the run's progress)."""
        return self.finished + sum(len(v) for v in self.perturbed.values())

    @property
    def successes(self) -> int:
        return sum(e.success for v in self.episodes.values() for e in v)

    def build(self, status: RunStatus, error: str | None = None) -> RunResult:
        """The result as of now. Tasks with no finished episode are listed too (trials scheduled, none done)."""
        c = self.counters
        task_results = [
            TaskResult.from_episodes(
                t.task_id,
                t.name,
                self.run.trials_per_task,
                self.episodes.get(t.task_id, []),
                t.language,
                perturbed=self.perturbed.get(t.task_id, []),
            )
            for t in self.tasks
        ]
        return RunResult.of_run(
            self.run,
            status,
            error=error,
            tasks=task_results,
            max_steps=self.max_steps,
            settle_steps=self.settle_steps,
            protocol=self.protocol,
            timings=Timings(
                started_at=self.started_at,
                finished_at=utc_now(),  # time of this snapshot; the final write is the end of the run
                wall_s=round(time.perf_counter() - self._t0, 3),
                env_setup_s=round(c.env_setup_s, 3),
                env_steps=c.env_steps,
                policy_calls=c.policy_calls,
                policy_s=round(c.policy_s, 3),
                sim_s=round(c.sim_s, 3),
            ),
            provenance=self.provenance,
        )
