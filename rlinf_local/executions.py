"""What one execution came to, read from Step Functions (moto's or AWS's): state, runs, verdict, failures.

The same reading serves the embedded default (which also keeps it in ``DIR/state.json``) and
``rlinf-bench status --state-machine-arn`` against a deployed stack.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlinf_local.execution_history import history, state_outputs
from rlinf_local.live_progress import LiveProgress

__all__ = ["ExecutionSummary", "Failure", "summarize_execution"]


class Failure(BaseModel):
    """One thing that failed, and why (as ``--json`` lists it)."""

    model_config = ConfigDict(extra="forbid")

    what: str
    reason: str


class ExecutionSummary(BaseModel):
    """One execution of the evaluation workflow, as ``status`` and ``--json`` show it."""

    model_config = ConfigDict(extra="forbid")

    name: str
    status: str = Field(description="RUNNING | SUCCEEDED | FAILED | TIMED_OUT | ABORTED | INTERRUPTED")
    checkpoint: dict[str, Any] = Field(default_factory=dict)
    execution_arn: str = ""
    runs_done: int = 0
    runs_failed: int = 0
    verdict: str = ""
    report_uri: str = ""
    mlflow_run_id: str | None = None
    already_sent: str = Field(default="", description="the summary was not sent again: the same one went out before")
    failures: list[Failure] = Field(default_factory=list)
    progress: LiveProgress | None = Field(default=None, description="while RUNNING: how far it has come")

    @property
    def outcome(self) -> str:
        """What came of it: the execution's status, but FAILED when it finished with a failed run, probe or
        publish (Step Functions says SUCCEEDED then: the failed Map items were caught so the rest reports)."""
        if self.status == "SUCCEEDED" and (self.runs_failed or self.failures):
            return "FAILED"
        return self.status

    def describe(self) -> str:
        """The state for a terminal line, without contradicting itself: 'FAILED (execution SUCCEEDED; ...)'."""
        if self.outcome == self.status:
            return self.status
        return f"FAILED (the execution finished, {len(self.failures)} part(s) of it failed)"

    def public(self) -> dict[str, Any]:
        """The ``executions[]`` entry of ``--json``: name, status, checkpoint (and what else is known)."""
        return self.model_dump(mode="json")


def _runs(outputs: dict[str, Any]) -> tuple[int, int, list[Failure]]:
    groups = (outputs.get("RunJobs") or {}).get("outcomes") or []
    done = failed = 0
    failures: list[Failure] = []
    for outcome in groups[0] if groups else []:
        if outcome.get("status") == "succeeded":
            done += 1
        else:
            failed += 1
            what = outcome.get("job_name") or f"{outcome.get('suite')} run {outcome.get('run_index')}"
            reason = outcome.get("cause") or outcome.get("error") or outcome.get("job_reason") or "failed"
            failures.append(Failure(what=f"eval {what}", reason=str(reason)))
    for outcome in groups[1] if len(groups) > 1 else []:
        if outcome.get("status") != "succeeded":
            reason = outcome.get("cause") or outcome.get("error") or "failed"
            failures.append(Failure(what=f"probe {outcome.get('probe') or outcome.get('job_name')}", reason=reason))
    return done, failed, failures


def summarize_execution(sfn: Any, arn: str) -> ExecutionSummary:
    """Describe one execution and read its history for the runs, the verdict and what failed."""
    desc = sfn.describe_execution(executionArn=arn)
    try:
        request = json.loads(desc.get("input") or "{}")
    except json.JSONDecodeError:
        request = {}
    outputs = state_outputs(history(sfn, arn))
    done, failed, failures = _runs(outputs)
    aggregate = outputs.get("Aggregate") or {}
    publish = outputs.get("Publish") or {}
    summary = ExecutionSummary(
        name=desc["name"],
        status=desc["status"],
        checkpoint=request.get("checkpoint", {}),
        execution_arn=arn,
        runs_done=done,
        runs_failed=failed,
        verdict=str(aggregate.get("headline", "")),
        report_uri=str(publish.get("report_uri") or aggregate.get("report_uri") or ""),
        mlflow_run_id=publish.get("mlflow_run_id"),
        already_sent=str(publish.get("already_sent") or ""),
        failures=failures,
    )
    if publish.get("mlflow_error"):
        summary.failures.append(Failure(what="MLflow publish", reason=str(publish["mlflow_error"])))
    if desc["status"] not in ("RUNNING", "SUCCEEDED"):
        cause = str(desc.get("cause") or desc.get("error") or desc["status"])
        summary.failures.append(Failure(what=f"execution {desc['name']}", reason=cause))
    return summary
