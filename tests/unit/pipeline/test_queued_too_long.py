"""A run failed by the queue sentinel keeps the sentinel's words, and its Job is stopped (nobody awaits it)."""

from __future__ import annotations

from pathlib import Path

from rlinf_aws.state_notify_failure import explain_run_failure
from rlinf_bench.contracts.workflow import RunFailureInput, StateError, WorkItem
from rlinf_k8s.queue_sentinel import QUEUE_ERROR
from rlinf_k8s.submitter import JobState, JobStatus


def eval_item(tmp_path: Path) -> WorkItem:
    """The eval run's work item whose Task failed (its Job ``eval-x-r0``)."""
    return WorkItem(
        kind="eval",
        job_name="eval-x-r0",
        namespace="rlinf-eval",
        image="rlinf-eval:test",
        result_uri=str(tmp_path / "r.json"),
        heartbeat_s=60,
        timeout_s=60,
    )


class _Cluster:
    def __init__(self) -> None:
        self.cancelled: list[str] = []

    def status(self, name: str, namespace: str) -> JobStatus:
        return JobStatus(name=name, namespace=namespace, state=JobState.PENDING)

    def cancel(self, name: str, namespace: str) -> bool:
        self.cancelled.append(name)
        return True


def test_given_a_run_queued_past_its_limit_then_the_outcome_names_the_queue_and_the_job_is_stopped(
    tmp_path: Path,
) -> None:
    cluster = _Cluster()
    item = eval_item(tmp_path)
    cause = "queued for 121 min behind rlinf-eval: never admitted within the queueing limit of 120 min"
    outcome = explain_run_failure(
        RunFailureInput(item=item, error=StateError(Error=QUEUE_ERROR, Cause=cause)),
        submitter_factory=lambda: cluster,  # type: ignore[arg-type,return-value]
    )
    assert outcome.error == QUEUE_ERROR and "behind rlinf-eval: never admitted" in outcome.cause
    assert cluster.cancelled == ["eval-x-r0"]
