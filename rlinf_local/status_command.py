"""``rlinf-bench status``: evaluations with their state, runs done or failed, and the verdict."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlinf_bench.errors import ConfigError
from rlinf_bench.reporting.text_safety import plain
from rlinf_local.executions import ExecutionSummary, Failure, summarize_execution
from rlinf_local.live_progress import read_progress
from rlinf_local.pipeline_command import STATE_FILE, StateFile

if TYPE_CHECKING:
    from rlinf_k8s.queue_sentinel import QueuedJob

__all__ = ["format_jobs", "format_status", "local_status", "queued_jobs", "remote_status"]


def local_status(out: Path) -> list[ExecutionSummary]:
    """What DIR/state.json records (an embedded default's pipeline, demo or watch wrote it)."""
    if not (out / STATE_FILE).is_file():
        raise ConfigError(
            f"{out} holds no {STATE_FILE}: give the --out folder of `rlinf-bench pipeline`, `demo` or `watch`"
        )
    return list(StateFile(out).state.executions)


def remote_status(
    state_machine_arn: str, *, limit: int = 20, sfn: Any = None, s3: Any = None
) -> list[ExecutionSummary]:
    """The newest ``limit`` executions of a deployed state machine, each read from its history; a running one
    also counts its episodes from the results bucket (``s3``), as ``pipeline`` shows them."""
    if ":stateMachine:" not in state_machine_arn:
        raise ConfigError(
            f"--state-machine-arn {state_machine_arn!r} is not a state machine ARN "
            "(arn:aws:states:REGION:ACCOUNT:stateMachine:NAME; the stack output EvaluationStateMachineArn)"
        )
    if sfn is None:
        from rlinf_aws.clients import boto_client

        sfn = boto_client("stepfunctions")
        s3 = s3 or boto_client("s3")
    try:
        found = sfn.list_executions(stateMachineArn=state_machine_arn, maxResults=limit)["executions"]
    except Exception as exc:  # botocore's ClientError: missing machine, no credentials, wrong region
        raise ConfigError(f"cannot list executions of {state_machine_arn}: {exc}") from exc
    summaries = [summarize_execution(sfn, e["executionArn"]) for e in found]
    for summary in summaries:
        if summary.status == "RUNNING" and s3 is not None:
            try:
                summary.progress = read_progress(sfn, s3, summary.execution_arn)
            except Exception as exc:  # no read access to the results bucket: the table still shows the state
                summary.failures.append(Failure(what="progress", reason=f"cannot read the results: {exc}"))
    return summaries


def backlog_lines(out: Path) -> str:
    """The held / superseded checkpoints DIR/backlog.json records ('' when none): ``status --out DIR``'s tail."""
    from rlinf_local.backlog_status import format_backlog, read_backlog

    return format_backlog(read_backlog(out))


def format_status(executions: list[ExecutionSummary]) -> str:
    """A table: execution, state, runs done/failed, verdict; then what failed."""
    if not executions:
        return "no executions"
    lines = [f"{'execution':<48} {'state':<11} {'runs ok/failed':>14}  verdict"]
    for e in executions:
        runs = f"{e.runs_done}/{e.runs_failed}"
        detail = e.verdict or "-"
        if e.status == "RUNNING" and e.progress is not None:
            runs = f"{e.progress.runs_finished}/{e.runs_failed} of {e.progress.runs_total}"
            detail = e.progress.line()
        lines.append(f"{e.name:<48} {e.outcome:<11} {runs:>14}  {detail}")
    for e in executions:
        for f in e.failures:
            lines.append(f"  {e.name}: {f.what}: {f.reason}")
    return "\n".join(plain(line) for line in lines)  # names and reasons come from files and Jobs


def queued_jobs(compute: str, namespace: str) -> list[QueuedJob]:
    """The Kueue Jobs of ``namespace`` on the cluster ``compute`` names (COMPUTE syntax), as the sentinel sees them."""
    from rlinf_local.compute import submitter_for

    reader: Any = getattr(submitter_for(compute), "queued_jobs", None)
    if reader is None:
        raise ConfigError(
            f"--compute {compute!r} runs no Kueue Jobs: name a cluster (eks:CLUSTER@REGION or kubeconfig:)"
        )
    jobs: list[QueuedJob] = reader(namespace)
    return jobs


def format_jobs(jobs: list[QueuedJob], *, now: datetime | None = None) -> str:
    """One line per Job: queued (and for how long, behind which queue; preempted or never admitted), running, done, failed."""
    now = now or datetime.now(UTC)
    if not jobs:
        return "no Kueue Jobs"
    lines = [f"{'job':<63} {'state':<8} detail"]
    lines += [f"{j.name:<63} {j.phase.value:<8} {j.explain(now) if j.phase.value == 'queued' else '-'}" for j in jobs]
    return "\n".join(plain(line) for line in lines)
