"""What one checkpoint's evaluation amounts to: per-suite statistics over the runs, verdicts against
baselines, infrastructure checks, and where everything was published.

The statistics are defined in docs/statistics.md; this module only fixes their shape.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.contracts.limits import Message, Name, Uri
from rlinf_bench.contracts.origin import RequestOrigin
from rlinf_bench.contracts.probes import ProbeResult
from rlinf_bench.contracts.protocol_profiles import RunProtocol
from rlinf_bench.contracts.results import Provenance, RunStatus
from rlinf_bench.contracts.robustness import FailureReason
from rlinf_bench.contracts.robustness_report import ReasonsSection, RobustnessSection
from rlinf_bench.contracts.verdict import ProvenanceChange, Verdict, VerdictValue
from rlinf_bench.contracts.versioned import Contract

__all__ = [
    "AdaptiveStatus",
    "CheckpointReport",
    "Disagreement",
    "InfraCheck",
    "ProvenanceChange",
    "RunSummary",
    "StateEpisode",
    "StateFlip",
    "StateOutcome",
    "SuiteReport",
    "TaskSummary",
    "Verdict",
    "VerdictValue",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunSummary(_Model):
    """One evaluation run of a suite, as it entered (or was kept out of) the aggregate."""

    run_index: int
    seed: int
    status: RunStatus
    success_rate: float | None = Field(default=None, description="None when the run failed")
    episodes: int = 0
    error: Message | None = None
    source: Uri = Field(default="", description="File or URI the RunResult was read from")
    provenance: Provenance | None = Field(
        default=None, description="The run's provenance (None in reports written before it was kept)"
    )


class Disagreement(_Model):
    """Whether the runs differ more than binomial noise allows (nondeterminism, a broken node)."""

    test: str
    statistic: float
    df: int
    p_value: float
    alpha: float
    flagged: bool
    p_adjusted: float | None = Field(default=None, description="p after the multiple-testing correction (per task)")
    correction: str = Field(default="", description="The multiple-testing correction applied, when several tests")


class TaskSummary(_Model):
    """One task across the runs."""

    task_id: int
    task_name: Name
    run_success_rates: list[float | None] = Field(description="Per run (by position in SuiteReport.runs)")
    success_rate_mean: float
    success_rate_std: float | None = Field(description="Sample std over runs; None with fewer than 2 runs")
    episodes: int
    successes: int
    wilson95_low: float
    wilson95_high: float
    ci95_low: float
    ci95_high: float
    disagreement: Disagreement | None = Field(
        default=None, description="Cochran's Q of this task's runs, Holm-corrected over the suite's tasks"
    )


_OPTIONAL_EPISODE_FIELDS = ("retries", "video", "error", "failure_reason")


class StateEpisode(_Model):
    """One episode of an initial state in one run: what the report's per-episode rows show."""

    run_index: int
    seed: int
    success: bool
    steps: int = 0
    retries: int = 0
    video: Uri | None = None
    error: Message | None = None
    failure_reason: FailureReason | None = Field(default=None, description="Why it failed, from the simulator")

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A report holds one of these per episode (1500 per suite): unset video/error/retries/reason are left out.
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if not (k in _OPTIONAL_EPISODE_FIELDS and not v)}


class StateOutcome(_Model):
    """Successes of one (task, initial state) cluster over the runs: the unit of the paired tests."""

    task_id: int
    init_state: int
    successes: int = Field(ge=0)
    trials: int = Field(ge=1)
    episodes: list[StateEpisode] = Field(
        default_factory=list, description="Per completed run, by run index (empty in older reports)"
    )


class StateFlip(_Model):
    """An initial state that passed in every run of the previous checkpoint and fails in every run now, or
    the reverse."""

    task_id: int
    task_name: Name = ""
    init_state: int
    direction: Literal["to_failure", "to_success"]
    before: str = Field(description="successes/trials at the reference checkpoint, e.g. 3/3")
    now: str = Field(description="successes/trials at this checkpoint, e.g. 0/3")


class AdaptiveStatus(_Model):
    """Where the adaptive budget stands for a suite after its completed rounds (docs/statistics.md)."""

    rounds: int = Field(description="Rounds (runs over every initial state) evaluated")
    max_rounds: int
    boundary_z: float = Field(description="Efficacy boundary of this look (O'Brien-Fleming alpha spending)")
    decision: Literal["stop", "continue"]
    reason: str = ""


class SuiteReport(_Model):
    """One suite of one checkpoint, aggregated over its runs."""

    suite: Name
    runs_expected: int
    runs_completed: int
    complete: bool = Field(description="Every expected run finished: only then are verdicts given")
    trials_per_task: int | None = Field(
        default=None, description="Episodes per task per run, as the runs requested (None in older reports)"
    )
    runs: list[RunSummary]
    tasks: list[TaskSummary]
    # Statistics are None when no run completed: there is nothing honest to report.
    success_rate_mean: float | None = Field(description="Mean of the completed runs' suite success rates")
    success_rate_std: float | None = Field(description="Sample std over completed runs")
    wilson95_low: float | None
    wilson95_high: float | None
    ci95_low: float | None = Field(description="Clustered by (task, initial state); see docs/statistics.md")
    ci95_high: float | None
    ci_method: str
    design_effect: float | None
    episodes: int
    successes: int
    clusters: int
    disagreement: Disagreement | None = None
    protocol: RunProtocol | None = Field(default=None, description="Episode settings of the runs (all runs agree)")
    episode_errors: int = Field(default=0, ge=0, description="Episodes ended by simulator errors, counted as failures")
    states: list[StateOutcome] = Field(default_factory=list)
    verdicts: list[Verdict] = Field(default_factory=list)
    flips: list[StateFlip] = Field(
        default_factory=list, description="Initial states that flipped against the previous checkpoint"
    )
    flips_against: str = Field(default="", description="The checkpoint the flips are counted against")
    adaptive: AdaptiveStatus | None = Field(default=None, description="Set when the adaptive budget was used")
    robustness: RobustnessSection | None = Field(
        default=None, description="Perturbed episodes against their control twins; None when the runs had none"
    )
    failure_reasons: ReasonsSection | None = Field(
        default=None, description="Failures by reason per task; None when no episode recorded a reason"
    )


class InfraCheck(_Model):
    """One probe measurement against its target."""

    probe: str
    metric: str
    value: float | None
    unit: str = ""
    op: str = ""
    target: float | None = None
    verdict: Literal["pass", "fail", "not_decided", "not_available"] = Field(
        description="not_decided: measured against a target by a run too small to answer it (demo size)"
    )
    source: Name = ""
    reason: Message = ""


class CheckpointReport(Contract):
    """Everything one checkpoint's evaluation produced: what MLflow, email and Slack show."""

    request_id: Name = ""
    checkpoint: CheckpointRef | None = None
    checkpoint_uri: Uri = ""
    experiment: str = Field(default="", max_length=1024)
    global_step: int | None = None
    policy: Uri = ""
    created_at: str = ""
    generator: str = Field(default="", description="rlinf-bench version that aggregated the runs")
    success_rate: float | None = Field(description="Mean over suites of each suite's success_rate_mean")
    complete: bool
    suites: list[SuiteReport]
    average_verdicts: list[Verdict] = Field(
        default_factory=list, description="The mean SR over suites vs a baseline's published average (suite='average')"
    )
    infra: list[InfraCheck] = Field(default_factory=list)
    probes: list[ProbeResult] = Field(default_factory=list)
    baselines: list[str] = Field(default_factory=list)
    links: dict[str, str] = Field(default_factory=dict, description="mlflow_run, report files, results")
    sources: list[str] = Field(default_factory=list, description="RunResult files or URIs aggregated")
    origin: RequestOrigin = Field(
        default_factory=RequestOrigin,
        description="The request's origin: what the user ran, for the fixes verdicts name",
    )

    def suite(self, name: str) -> SuiteReport | None:
        return next((s for s in self.suites if s.suite == name), None)

    @property
    def verdicts(self) -> list[Verdict]:
        """Every verdict: per suite, then against published averages."""
        return [v for s in self.suites for v in s.verdicts] + list(self.average_verdicts)
