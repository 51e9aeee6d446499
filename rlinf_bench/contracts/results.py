"""What one evaluation run produced: per-episode outcomes, per-task and per-suite success rates,
and the provenance needed to trace every number back to its seeds, versions and inputs."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator

from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.contracts.limits import Message, Name, SettingText, Uri
from rlinf_bench.contracts.protocol_profiles import RunProtocol
from rlinf_bench.contracts.robustness import AXES, FailureDetail, FailureReason, Perturbation
from rlinf_bench.contracts.versioned import Contract

if TYPE_CHECKING:
    from rlinf_bench.contracts.request import EvalRun


class RunStatus(StrEnum):
    COMPLETE = "complete"  # every scheduled episode finished
    INCOMPLETE = "incomplete"  # interrupted: the episodes present are real, but some are missing
    FAILED = "failed"  # the run could not produce trustworthy episodes (setup error, worker crash loop...)


class EpisodeResult(BaseModel):
    """One rollout from one fixed initial state."""

    model_config = ConfigDict(extra="forbid")

    init_state: int = Field(ge=0, description="Index of the task's fixed initial state")
    seed: int = Field(description="Seed the environment was seeded with for this episode")
    # Strict: "false", 0 or "no" read as a boolean would turn a writer's bug into a success rate.
    success: StrictBool
    steps: int = Field(ge=0, description="Policy steps taken (settle steps excluded)")
    wall_s: float = Field(ge=0)
    retries: int = Field(default=0, ge=0, description="Times the episode was re-run after a worker crash")
    video: Uri | None = None
    error: Message | None = Field(
        default=None,
        description="Simulator error that ended the episode as a failure (--on-episode-error fail-episode)",
    )
    perturbation: Perturbation | None = Field(
        default=None,
        description="Set on a perturbed episode (TaskResult.perturbed); None on the standard (control) episodes",
    )
    failure_reason: FailureReason | None = Field(
        default=None, description="Why a failed episode failed, read from the simulator; None on a success"
    )
    failure_detail: FailureDetail | None = Field(
        default=None, description="The evidence for failure_reason, e.g. 'dropped at step 143, 0.21 m from target'"
    )


class TaskResult(BaseModel):
    """All episodes of one task in one run."""

    model_config = ConfigDict(extra="forbid")

    task_id: int = Field(ge=0)
    task_name: Name
    language: SettingText = ""
    trials: int = Field(ge=0, description="Episodes scheduled")
    successes: int = Field(ge=0)
    success_rate: float = Field(ge=0, le=1, description="successes / episodes finished")
    episodes: list[EpisodeResult] = Field(default_factory=list)
    perturbed: list[EpisodeResult] = Field(
        default_factory=list,
        description="Perturbed episodes (robustness): each has its control twin in ``episodes`` (same initial "
        "state); they never count in trials, successes or success_rate",
    )

    @model_validator(mode="after")
    def _consistent(self) -> TaskResult:
        self._perturbed_consistent()
        seen: dict[int, int] = {}
        for j, e in enumerate(self.episodes):
            if e.init_state in seen:
                raise ValueError(
                    f"task {self.task_id}: episodes[{j}].init_state={e.init_state} repeats episodes[{seen[e.init_state]}]: "
                    "each initial state is played once per run, so a repeat would count twice"
                )
            seen[e.init_state] = j
        if self.successes != sum(e.success for e in self.episodes):
            raise ValueError(
                f"task {self.task_id}: successes={self.successes} but "
                f"{sum(e.success for e in self.episodes)} episodes succeeded"
            )
        if len(self.episodes) > self.trials:
            raise ValueError(f"task {self.task_id}: {len(self.episodes)} episodes > trials={self.trials}")
        return self

    def _perturbed_consistent(self) -> None:
        if any(e.perturbation is not None for e in self.episodes):
            raise ValueError(f"task {self.task_id}: a perturbed episode is in episodes; it belongs in perturbed")
        seen: set[tuple[int, str, int]] = set()
        for j, e in enumerate(self.perturbed):
            if e.perturbation is None:
                raise ValueError(f"task {self.task_id}: perturbed[{j}] has no perturbation")
            key = (e.init_state, e.perturbation.axis.value, e.perturbation.level)
            if key in seen:
                raise ValueError(
                    f"task {self.task_id}: perturbed[{j}] repeats initial state {key[0]} at {key[1]} level {key[2]}"
                )
            seen.add(key)

    @classmethod
    def from_episodes(
        cls,
        task_id: int,
        task_name: str,
        trials: int,
        episodes: list[EpisodeResult],
        language: str = "",
        perturbed: Sequence[EpisodeResult] = (),
    ) -> TaskResult:
        """The task's result from its finished episodes (any order); ``perturbed``: its perturbed episodes."""
        eps = sorted(episodes, key=lambda e: e.init_state)
        succ = sum(e.success for e in eps)
        return cls(
            task_id=task_id,
            task_name=task_name,
            language=language,
            trials=trials,
            successes=succ,
            success_rate=(succ / len(eps)) if eps else 0.0,
            episodes=eps,
            perturbed=sorted(perturbed, key=_perturbed_order),
        )


def _perturbed_order(e: EpisodeResult) -> tuple[int, int, int]:
    # initial state, then LIBERO-plus's order of axes, then level: the plan's order, whatever the finishing order
    p = e.perturbation
    return (e.init_state, AXES.index(p.axis), p.level) if p is not None else (e.init_state, -1, -1)


class Provenance(BaseModel):
    """Where and with what a result was produced."""

    model_config = ConfigDict(extra="forbid")

    packages: dict[Name, Name] = Field(
        default_factory=dict, max_length=5000, description="Versions incl. simulator packages"
    )
    python: Name = ""
    git_sha: Name | None = None
    host: Name = ""
    platform: Name = ""
    cpu: Name = ""
    cpu_count: int = 0
    gpu: list[Name] = Field(default_factory=list, max_length=64)
    rendering_backend: Name = Field(default="", description="MUJOCO_GL value and EGL device, if any")
    image_digest: Uri | None = None
    command: list[SettingText] = Field(default_factory=list, max_length=1000)
    checkpoint_sha256: Name | None = Field(default=None, description="Digest of the weights the policy loaded")
    extra: dict[str, Any] = Field(default_factory=dict)


class Timings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    started_at: str = ""
    finished_at: str = ""
    wall_s: float = 0.0
    env_setup_s: float = 0.0
    env_steps: int = 0
    policy_calls: int = 0
    policy_s: float = 0.0
    sim_s: float = 0.0


class RunResult(Contract):
    """The outcome of one EvalRun."""

    request_id: Name = ""
    suite: Name
    run_index: int = Field(ge=0)
    seed: int
    policy: Uri
    checkpoint: CheckpointRef | None = None
    status: RunStatus
    error: Message | None = Field(default=None, description="Why the run is incomplete or failed")
    trials_per_task: int = Field(ge=1)
    max_steps: int = Field(ge=1)
    settle_steps: int = Field(ge=0)
    greedy: bool = True
    protocol: RunProtocol | None = Field(
        default=None,
        description="Profile, episode settings, RNG scheme and error policy; None: it failed before they were resolved",
    )
    tasks: list[TaskResult] = Field(default_factory=list)
    episodes: int = Field(default=0, ge=0, description="Episodes finished over all tasks")
    successes: int = Field(default=0, ge=0)
    success_rate: float = Field(default=0.0, ge=0, le=1, description="successes / episodes over all tasks")
    timings: Timings = Field(default_factory=Timings)
    provenance: Provenance = Field(default_factory=Provenance)

    @model_validator(mode="after")
    def _suite_totals(self) -> RunResult:
        seen: dict[int, int] = {}
        for i, t in enumerate(self.tasks):
            if t.task_id in seen:
                raise ValueError(
                    f"tasks[{i}].task_id={t.task_id} repeats tasks[{seen[t.task_id]}]: list each task once per run"
                )
            seen[t.task_id] = i
        eps = sum(len(t.episodes) for t in self.tasks)
        succ = sum(t.successes for t in self.tasks)
        if self.episodes != eps or self.successes != succ:
            raise ValueError(
                f"suite totals episodes={self.episodes}, successes={self.successes} do not match the "
                f"tasks ({eps}, {succ})"
            )
        rate = succ / eps if eps else 0.0
        if abs(self.success_rate - rate) > 1e-9:
            raise ValueError(f"success_rate={self.success_rate} but successes/episodes={rate}")
        return self

    @classmethod
    def of_run(
        cls,
        run: EvalRun,
        status: RunStatus,
        *,
        max_steps: int,
        settle_steps: int,
        tasks: Sequence[TaskResult] = (),
        error: str | None = None,
        protocol: RunProtocol | None = None,
        timings: Timings | None = None,
        provenance: Provenance | None = None,
    ) -> RunResult:
        """The one way to build the RunResult of an EvalRun: the run's identity and settings, its tasks'
        totals derived. Used by the eval Job (as it goes), the Jobs' preflight and the aggregate's stand-ins."""
        base = cls(
            request_id=run.request_id,
            suite=run.suite,
            run_index=run.run_index,
            seed=run.seed,
            policy=run.policy,
            checkpoint=run.checkpoint if run.checkpoint.uri else None,
            status=status,
            error=error,
            trials_per_task=run.trials_per_task,
            max_steps=max_steps,
            settle_steps=settle_steps,
            protocol=protocol,
            timings=timings or Timings(),
            provenance=provenance or Provenance(),
        )
        return base.with_tasks(list(tasks)) if tasks else base

    def with_tasks(self, tasks: list[TaskResult]) -> RunResult:
        """A copy whose tasks (and derived suite totals) are replaced."""
        eps = sum(len(t.episodes) for t in tasks)
        succ = sum(t.successes for t in tasks)
        data = self.model_dump()
        data.update(
            tasks=[t.model_dump() for t in tasks],
            episodes=eps,
            successes=succ,
            success_rate=(succ / eps) if eps else 0.0,
        )
        return RunResult.model_validate(data)
