"""What a suite report says about robustness and failure reasons: the shape of ``SuiteReport.robustness`` and
``SuiteReport.failure_reasons``.

Robustness compares each perturbed episode with its control twin (the standard episode of the same task and
initial state in the same run), so every effect is paired, and the (task, initial state) cluster is the unit
of every interval and test, as for the success rate. Failure reasons are counted per task over the episodes
that count in the success rate, the perturbed ones beside them. The statistics are defined in
docs/robustness.md ("Statistics"); this module only fixes their shape.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.contracts.limits import Message, Name, Uri
from rlinf_bench.contracts.robustness import FailureReason, PerturbationAxis
from rlinf_bench.contracts.verdict import Verdict, VerdictValue

__all__ = [
    "AxisVerdict",
    "CategoryRate",
    "PerturbedOutcome",
    "PerturbedVideo",
    "ReasonMove",
    "ReasonsSection",
    "RobustnessFlag",
    "RobustnessLevel",
    "RobustnessSection",
    "TaskReasons",
]


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PerturbedVideo(_Part):
    """One recorded perturbed episode: which run played it, how it ended, and its video as the run named it."""

    run_index: int = Field(ge=0)
    success: bool
    video: Uri
    failure_reason: FailureReason | None = None


class PerturbedOutcome(_Part):
    """One (task, initial state, axis, level) over the completed runs: the perturbed episodes that have a control
    twin, and those twins. The unit of the paired statistics and of the comparison with earlier checkpoints."""

    task_id: int
    init_state: int
    axis: PerturbationAxis
    level: int = Field(ge=0)
    magnitude: float = Field(ge=0)
    unit: Name
    trials: int = Field(ge=0, description="Perturbed episodes with a control twin (at most one per run)")
    successes: int = Field(ge=0, description="Of those perturbed episodes")
    control_successes: int = Field(ge=0, description="Of their control twins (same runs)")
    unpaired: int = Field(default=0, ge=0, description="Perturbed episodes whose control twin is missing: not counted")
    seeds: list[int] = Field(default_factory=list, description="Seeds of the paired perturbed episodes, sorted")
    reasons: dict[FailureReason, int] = Field(
        default_factory=dict, description="Why the failed perturbed episodes failed (those with a reason)"
    )
    videos: list[PerturbedVideo] = Field(
        default_factory=list, description="The perturbed episodes that recorded a video, by run index"
    )


class RobustnessLevel(_Part):
    """One axis at one level over the suite: the perturbed success rate with its control beside it, and the
    paired drop (control - perturbed) with its interval, clustered by (task, initial state)."""

    axis: PerturbationAxis
    level: int = Field(ge=0)
    magnitude: float = Field(ge=0)
    unit: Name
    episodes: int = Field(ge=0, description="Paired perturbed episodes")
    clusters: int = Field(ge=0, description="(task, initial state) clusters they come from")
    successes: int = Field(ge=0)
    success_rate: float = Field(ge=0, le=1)
    ci95_low: float = Field(ge=0, le=1, description="Clustered 95 % interval of success_rate")
    ci95_high: float = Field(ge=0, le=1)
    control_successes: int = Field(ge=0)
    control_success_rate: float = Field(ge=0, le=1, description="The control twins' rate, same pairs")
    drop: float = Field(ge=-1, le=1, description="control_success_rate - success_rate: positive is worse")
    drop_ci95_low: float = Field(ge=-1, le=1)
    drop_ci95_high: float = Field(ge=-1, le=1)
    p_value: float | None = Field(
        default=None, ge=0, le=1, description="One-sided: evidence that perturbed episodes succeed less than controls"
    )
    unpaired: int = Field(default=0, ge=0, description="Perturbed episodes without a control twin (left out)")


class CategoryRate(_Part):
    """One column of the per-category table (LIBERO-plus's layout): the success rate under one category."""

    category: Name = Field(description="An axis name (camera, robot_init, ...) or a published suite's own kind")
    source: Literal["native", "published"] = Field(
        description="native: the run's perturbed episodes of that axis; published: a robustness suite's variants"
    )
    episodes: int = Field(ge=0)
    successes: int = Field(ge=0)
    success_rate: float = Field(ge=0, le=1)
    tasks: list[int] = Field(default_factory=list, description="published: the suite's tasks in this category")


class AxisVerdict(_Part):
    """The success rate under one axis (or published category) against the previous checkpoint's, paired over
    the (task, initial state) clusters both evaluated alike."""

    axis: Name = Field(description="The axis, or the published category")
    verdict: Verdict


class RobustnessFlag(_Part):
    """The standard success rate rose against the previous checkpoint while an axis fell decisively."""

    against: str = Field(description="The previous checkpoint, e.g. global_step 400")
    axes: list[Name] = Field(min_length=1, description="The axes (or categories) whose verdict is below")
    axis_differences: dict[Name, float] = Field(default_factory=dict, description="Per axis, SR now - before")
    sr_suites: list[Name] = Field(
        min_length=1,
        description="The standard suites whose SR rose: this suite, or for a published robustness "
        "suite the checkpoint's standard suites",
    )
    sr_difference: float = Field(description="Standard SR now - before (fraction, mean over sr_suites), > 0")
    sr_verdict: VerdictValue | None = Field(
        default=None, description="The standard SR's own verdict against the previous checkpoint (one suite)"
    )


class RobustnessSection(_Part):
    """A suite's robustness: per axis and level, per category, per axis against the previous checkpoint."""

    levels: list[RobustnessLevel] = Field(default_factory=list, description="Native axes, by axis then level")
    states: list[PerturbedOutcome] = Field(default_factory=list)
    categories: list[CategoryRate] = Field(
        default_factory=list, description="The category table's row for this suite, in LIBERO-plus's column order"
    )
    totals: list[CategoryRate] = Field(
        default_factory=list, description="Over every category, one per source (the table's Total column)"
    )
    verdicts: list[AxisVerdict] = Field(default_factory=list, description="Against the previous checkpoint")
    flag: RobustnessFlag | None = None
    unpaired: int = Field(default=0, ge=0, description="Perturbed episodes without a control twin, left out")


class TaskReasons(_Part):
    """One task's failures by reason, over the completed runs."""

    task_id: int
    task_name: Name = ""
    episodes: int = Field(ge=0, description="Standard episodes (those that count in the success rate)")
    failures: int = Field(ge=0)
    counts: dict[FailureReason, int] = Field(default_factory=dict, description="Standard episodes' failures")
    unlabelled: int = Field(default=0, ge=0, description="Failures that carry no reason (older runs)")
    perturbed: dict[FailureReason, int] = Field(
        default_factory=dict, description="The perturbed episodes' failures (robustness), apart"
    )


class ReasonMove(_Part):
    """How often one task failed for one reason, now and at the previous checkpoint."""

    task_id: int
    task_name: Name = ""
    reason: FailureReason
    before: int = Field(ge=0)
    now: int = Field(ge=0)
    p_value: float | None = Field(
        default=None, ge=0, le=1, description="Two-sided paired t-test over initial states; None when untested"
    )
    p_adjusted: float | None = Field(default=None, ge=0, le=1, description="Holm over the suite's tested pairs")
    decisive: bool = Field(default=False, description="p_adjusted < alpha: it moved beyond noise")

    @property
    def change(self) -> int:
        return self.now - self.before


class ReasonsSection(_Part):
    """A suite's failure reasons: per task, and how they moved against the previous checkpoint."""

    tasks: list[TaskReasons] = Field(default_factory=list)
    moves: list[ReasonMove] = Field(default_factory=list, description="Changed counts, largest first")
    against: str = Field(default="", description="The checkpoint the moves are counted against")
    alpha: float = Field(default=0.05, description="Level of the Holm-corrected test behind ``decisive``")
    note: Message = Field(default="", description="Why no moves were counted, when none were")
