"""The queue sentinel: keep the Task state of a Job that waits for Kueue (or for a node) alive, up to a limit.

A Job sends heartbeats from its own process, so a Job that Kueue has not admitted yet (suspended), or
whose pod waits for a node, is silent: without help the state machine's heartbeat timeout would fail a
run that is only queued. The sentinel runs on a schedule (the queue_sentinel Lambda; a timer in the
embedded default), lists our Kueue Jobs, and for each one that has not started sends a heartbeat with the
Job's task token, until the Job has waited its queueing limit (annotation ``rlinf-bench/queue-limit-min``);
then it fails the task with "queued for N min behind <queue>: never admitted". It reads only Jobs, their
pods and Kueue Workloads (to tell a preempted, requeued Job from one never admitted), and writes nothing to
the cluster: the failure branch of the state machine stops the Job.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol

from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from rlinf_k8s.api_client import ApiCaller
from rlinf_k8s.job_status import JOB_NAME_LABEL, job_status_from
from rlinf_k8s.jobspec import KUEUE_QUEUE_LABEL, QUEUE_LIMIT_ANNOTATION
from rlinf_k8s.submitter import JobState

__all__ = [
    "QUEUE_ERROR",
    "JobPhase",
    "QueuedJob",
    "SentinelReport",
    "TaskChannel",
    "job_view",
    "read_queue",
    "sweep",
]

log = logging.getLogger(__name__)

#: The error name of a run that waited past its queueing limit (the failure branch stops its Job).
QUEUE_ERROR = "QueuedTooLong"
TOKEN_ENV = "RLINF_BENCH_TASK_TOKEN"  # rlinf_aws.task_callback.TOKEN_ENV (rlinf_k8s does not import rlinf_aws)
APP_SELECTOR = "app.kubernetes.io/name=rlinf-bench"
KUEUE_GROUP, KUEUE_VERSION = "kueue.x-k8s.io", "v1beta1"
DEFAULT_LIMIT_MIN = 120


class JobPhase(StrEnum):
    """What ``status`` shows per Job."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True)
class QueuedJob:
    """One of our Kueue Jobs as the sentinel sees it (the token is kept out of ``repr``)."""

    name: str
    namespace: str
    queue: str
    phase: JobPhase
    waiting_since: datetime
    limit_min: int
    preempted: bool = False
    token: str = field(default="", repr=False)

    def waited_min(self, now: datetime) -> int:
        """Whole minutes this Job has waited since it was created, or since it was last preempted."""
        return int((now - self.waiting_since).total_seconds() // 60)

    def explain(self, now: datetime) -> str:
        """One line: queued (never admitted, or preempted and requeued), running, done or failed."""
        if self.phase is not JobPhase.QUEUED:
            return self.phase.value
        waited = f"queued for {self.waited_min(now)} min behind {self.queue}"
        return f"preempted (Kueue requeued it); {waited}" if self.preempted else waited


class TaskChannel(Protocol):
    """Step Functions' task-token calls, injected (boto3 in the Lambda, moto in tests)."""

    def send_task_heartbeat(self, *, taskToken: str) -> Any: ...

    def send_task_failure(self, *, taskToken: str, error: str, cause: str) -> Any: ...


@dataclass
class SentinelReport:
    """What one sweep did, by Job name."""

    heartbeats: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def _parse_time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str) and value:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    return None


def _token(job: k8s.V1Job) -> str:
    spec = job.spec.template.spec if job.spec and job.spec.template else None
    for container in (spec.containers if spec else None) or []:
        for var in container.env or []:
            if var.name == TOKEN_ENV and var.value:
                # The Job builder escaped $ as $$ (Kubernetes' $(VAR) expansion); the container sees it unescaped.
                return str(var.value).replace("$$", "$")
    return ""


def _eviction(workloads: Sequence[Mapping[str, Any]]) -> datetime | None:
    """When Kueue last evicted (preempted) the Job's Workload, if it did and has not re-admitted it since."""
    latest: datetime | None = None
    for wl in workloads:
        conds = {c.get("type"): c for c in (wl.get("status") or {}).get("conditions") or []}
        evicted = conds.get("Evicted")
        admitted = conds.get("Admitted")
        if evicted and evicted.get("status") == "True" and not (admitted and admitted.get("status") == "True"):
            when = _parse_time(evicted.get("lastTransitionTime"))
            latest = max(latest, when) if latest and when else (when or latest)
    return latest


def _phase(job: k8s.V1Job, pods: Sequence[k8s.V1Pod]) -> JobPhase:
    status = job_status_from(job, pods)
    if status.state is JobState.SUCCEEDED:
        return JobPhase.DONE
    if status.state is JobState.FAILED:
        return JobPhase.FAILED
    if status.state is JobState.RUNNING and not (job.spec and job.spec.suspend):
        return JobPhase.RUNNING
    return JobPhase.QUEUED  # suspended (not admitted), or admitted with its pod waiting for a node


def job_view(job: k8s.V1Job, pods: Sequence[k8s.V1Pod], workloads: Sequence[Mapping[str, Any]]) -> QueuedJob:
    """How long and why ``job`` waits, from the Job, its pods and the Kueue Workloads it owns."""
    meta = job.metadata or k8s.V1ObjectMeta()
    created = _parse_time(meta.creation_timestamp) or datetime.now(UTC)
    evicted = _eviction(workloads)
    try:
        limit = int((meta.annotations or {}).get(QUEUE_LIMIT_ANNOTATION, DEFAULT_LIMIT_MIN))
    except ValueError:
        limit = DEFAULT_LIMIT_MIN
    return QueuedJob(
        name=meta.name or "",
        namespace=meta.namespace or "",
        queue=(meta.labels or {}).get(KUEUE_QUEUE_LABEL, ""),
        phase=_phase(job, pods),
        waiting_since=max(created, evicted) if evicted else created,
        limit_min=limit,
        preempted=evicted is not None,
        token=_token(job),
    )


def _workloads(caller: ApiCaller, namespace: str) -> list[dict[str, Any]]:
    api = k8s.CustomObjectsApi(caller.api_client)
    try:
        out: Any = caller.call(
            f"list Kueue Workloads in {namespace}",
            api.list_namespaced_custom_object,
            KUEUE_GROUP,
            KUEUE_VERSION,
            namespace,
            "workloads",
        )
    except ApiException as exc:
        if exc.status == 404:  # Kueue not installed: no Workloads, so nothing was preempted
            return []
        raise
    items: list[dict[str, Any]] = out.get("items") or []
    return items


def read_queue(caller: ApiCaller, namespace: str) -> list[QueuedJob]:
    """Every Kueue Job of ours in ``namespace`` (Jobs without the queue label are not the sentinel's)."""
    batch, core = k8s.BatchV1Api(caller.api_client), k8s.CoreV1Api(caller.api_client)
    jobs = caller.call(f"list Jobs in {namespace}", batch.list_namespaced_job, namespace, label_selector=APP_SELECTOR)
    ours = [j for j in jobs.items or [] if KUEUE_QUEUE_LABEL in ((j.metadata and j.metadata.labels) or {})]
    if not ours:
        return []
    workloads = _workloads(caller, namespace)
    views = []
    for job in ours:
        name = job.metadata.name if job.metadata else ""
        pods = caller.call(
            f"list pods of Job {namespace}/{name}",
            core.list_namespaced_pod,
            namespace,
            label_selector=f"{JOB_NAME_LABEL}={name}",
        )
        owned = [
            w
            for w in workloads
            if any(r.get("kind") == "Job" and r.get("name") == name for r in w["metadata"].get("ownerReferences") or [])
        ]
        views.append(job_view(job, list(pods.items or []), owned))
    return views


def sweep(jobs: Sequence[QueuedJob], sfn: TaskChannel, *, now: datetime | None = None) -> SentinelReport:
    """Heartbeat every queued Job within its limit; fail the task of every one past it. Never raises per Job."""
    now = now or datetime.now(UTC)
    report = SentinelReport()
    for job in jobs:
        if job.phase is not JobPhase.QUEUED or not job.token:
            continue  # a running Job beats by itself; a finished one has called back
        try:
            if job.waited_min(now) >= job.limit_min:
                cause = (
                    f"{job.explain(now)}: never admitted within the queueing limit of {job.limit_min} min "
                    "(kueue.queue_limit_min); give the ClusterQueue more quota or raise the limit"
                )
                sfn.send_task_failure(taskToken=job.token, error=QUEUE_ERROR, cause=cause)
                report.failed[job.name] = cause
            else:
                sfn.send_task_heartbeat(taskToken=job.token)
                report.heartbeats.append(job.name)
        except Exception as exc:  # a task already closed (TaskTimedOut, InvalidToken) must not stop the sweep
            log.warning("queue sentinel: Job %s/%s: %s", job.namespace, job.name, exc)
            report.errors[job.name] = f"{type(exc).__name__}: {exc}"
    return report
