"""The documents that travel through the evaluation state machine (statemachine/evaluate_checkpoint.asl.json).

Each state's Lambda reads one of these and returns another; the ASL only moves them around. Keeping
them here, next to the other contracts, means the JSON the state machine carries has a schema, and a
malformed document fails at the edge with the field named, not three states later.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.contracts.request import EvalRequest, EvalRun, JobSettings, KueueSettings, ProbeSpec, Resources
from rlinf_bench.contracts.versioned import Contract

__all__ = [
    "AggregateInput",
    "AggregateResult",
    "FailureEvent",
    "FailureNotice",
    "FailureNotifyInput",
    "JobCallback",
    "JobFields",
    "OutcomeStatus",
    "PlanInput",
    "PlanResult",
    "PublishResult",
    "RunFailureInput",
    "RunOutcome",
    "ShardRef",
    "StateError",
    "SubmitInput",
    "SubmitResult",
    "WorkItem",
]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ShardRef(_Doc):
    """Which shard of a sharded eval run an item is (rlinf_bench.sharding)."""

    index: int = Field(ge=0, description="0-based")
    count: int = Field(ge=2)
    run_uri: str = Field(description="Where the merged RunResult of the whole run goes")


class JobFields(_Doc):
    """What every Job of one request shares, as the Job builder reads it: whose Job it is, its container's
    resources, where and how it runs on Kubernetes, and its Kueue queue.

    Plan builds it once from the checked request; each Map iteration gets it beside its item, in place
    of the whole request (which stays at the top of the execution's state for Aggregate and Publish).
    """

    request_id: str
    checkpoint: CheckpointRef
    resources: Resources
    kubernetes: JobSettings
    kueue: KueueSettings | None = None

    @classmethod
    def of(cls, request: EvalRequest) -> JobFields:
        """The Job fields of ``request`` (as it will run: after the deployment filled what it decides)."""
        return cls(
            request_id=request.request_id,
            checkpoint=request.checkpoint,
            resources=request.resources,
            kubernetes=request.kubernetes,
            kueue=request.kueue,
        )


class WorkItem(_Doc):
    """One Map item: an eval run (or one shard of it) or a probe, with its Job's name and image, and where its
    result will be."""

    kind: Literal["eval", "probe"]
    job_name: str
    namespace: str
    image: str = Field(description="The Job's container image (the suite's eval image, or the probe's)")
    result_uri: str
    heartbeat_s: int = Field(ge=1)
    timeout_s: int = Field(ge=1)
    run: EvalRun | None = None
    probe: ProbeSpec | None = None
    shard: ShardRef | None = Field(default=None, description="Set on the shards of a sharded run only")

    @property
    def label(self) -> str:
        """How a person names this item: ``libero_spatial run 1``, ``libero_10 run 0 shard 2/3`` or ``probe nccl``."""
        if self.run is not None:
            tail = f" shard {self.shard.index + 1}/{self.shard.count}" if self.shard else ""
            return f"{self.run.suite} run {self.run.run_index}{tail}"
        return f"probe {self.probe.name if self.probe else '?'}"


class PlanInput(_Doc):
    """The planner's input: the execution input (an EvalRequest) and the execution's name."""

    request: EvalRequest
    execution: str = Field(default="", description="$$.Execution.Name: Jobs are named after it")


class PlanResult(Contract):
    """What the state machine fans out: the request as resolved, the Job fields every item shares, then the
    two Map item lists."""

    request: EvalRequest
    execution: str
    result_root: str = Field(description="Folder or prefix of this checkpoint and matrix's results and report")
    job: JobFields
    eval_items: list[WorkItem]
    probe_items: list[WorkItem]
    max_concurrency: int = Field(ge=0)
    budget: str = Field(
        default="", description="What the eval items play: standard and perturbed episodes over all runs"
    )


class SubmitInput(_Doc):
    """job_submitter's input: one Map item, the Job fields of its request, and the task token to call back with."""

    job: JobFields
    item: WorkItem
    task_token: str = Field(repr=False, min_length=1)


class SubmitResult(_Doc):
    job_name: str
    namespace: str
    created: bool


class OutcomeStatus(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class JobCallback(_Doc):
    """What a Job sends with SendTaskSuccess: where its result is, a one-line headline, and who it is."""

    status: Literal[OutcomeStatus.SUCCEEDED] = OutcomeStatus.SUCCEEDED
    kind: Literal["eval", "probe"]
    job_name: str = ""
    result_uri: str
    headline: str = ""
    suite: str | None = None
    run_index: int | None = None
    probe: str | None = None


class StateError(_Doc):
    """A Catch's ``$.error``: Step Functions' Error and Cause."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    error: str = Field(default="", alias="Error")
    cause: str = Field(default="", alias="Cause")

    @field_validator("error", "cause", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        # Step Functions sends a null Cause for timeouts and for failures sent without one.
        return "" if value is None else value


class RunFailureInput(_Doc):
    """A Map item whose Task failed: the item (its Job's name and namespace) and the caught error."""

    action: Literal["explain_run"] = "explain_run"
    item: WorkItem
    error: StateError


class RunOutcome(_Doc):
    """How one Map item ended; failed items carry the reason, never a number."""

    status: OutcomeStatus
    kind: Literal["eval", "probe"]
    job_name: str = ""
    result_uri: str = ""
    headline: str = ""
    suite: str | None = None
    run_index: int | None = None
    probe: str | None = None
    error: str = ""
    cause: str = ""
    job_reason: str | None = Field(default=None, description="Kubernetes' reason: OOMKilled, Evicted, ...")
    state_error: StateError | None = Field(default=None, description="The caught error, when nothing explained it")

    @model_validator(mode="after")
    def _error_from_state(self) -> RunOutcome:
        if self.state_error is not None:
            self.error = self.error or self.state_error.error or "Failed"
            self.cause = self.cause or self.state_error.cause
        return self

    @property
    def label(self) -> str:
        if self.kind == "eval":
            return f"{self.suite} run {self.run_index}"
        return f"probe {self.probe}"


class AggregateInput(_Doc):
    """The plan plus the Parallel state's output: one list of outcomes per branch."""

    request: EvalRequest
    execution: str = ""
    result_root: str
    eval_items: list[WorkItem] = Field(description="The Plan's eval items: which shards each sharded run has")
    outcomes: list[list[RunOutcome]]

    def flat(self) -> list[RunOutcome]:
        return [o for branch in self.outcomes for o in branch]


class AggregateResult(_Doc):
    """Where the CheckpointReport is, and what the publisher needs to say without reading it again."""

    request: EvalRequest
    execution: str = ""
    result_root: str = ""
    report_uri: str
    headline: str
    complete: bool
    failed_runs: list[str] = Field(default_factory=list, description="'<what>: <why>' per failed item")
    notes: list[str] = Field(default_factory=list, description="Problems met while aggregating (MLflow history...)")


class PublishResult(_Doc):
    report_uri: str
    mlflow_run_id: str | None = None
    mlflow_error: str = ""
    message_id: str = ""
    email_subject: str = ""
    already_sent: str = Field(
        default="",
        description="The same summary (checkpoint and content) went out before, so nothing was sent: what and when",
    )


class FailureNotifyInput(_Doc):
    """The failure branch's input: what was running (when known) and the caught error."""

    action: Literal["notify"] = "notify"
    request: EvalRequest | None = None
    execution: str = ""
    stage: str = Field(default="", description="The state that failed: plan, aggregate, publish")
    error: StateError = Field(default_factory=StateError)


class FailureNotice(_Doc):
    """The failure notification as sent: subject, text, and the SNS message id."""

    subject: str
    text: str
    message_id: str = ""


class FailureEvent(RootModel[Annotated[RunFailureInput | FailureNotifyInput, Field(discriminator="action")]]):
    """failure_notifier's input: either action, told apart by its ``action`` field."""
