"""The queue sentinel: keep the Task state of a Job that waits for Kueue (or for a node) alive, up to a limit.

A Job sends heartbeats from its own process, so a Job that Kueue has not admitted yet (suspended), or
whose pod waits for a node, is silent: without help the state machine's heartbeat timeout would fail a
run that is only queued. The sentinel runs on a schedule (the queue_sentinel Lambda; a timer in the
embedded default), lists our Kueue Jobs, and for each one that has not started sends a heartbeat with the
Job's task token, until the Job has waited its queueing limit (annotation ``rlinf-bench/queue-limit-min``);
then it fails the task with "queued for N min behind <queue>: never admitted". It reads only Jobs, their
pods and Kueue Workloads (to tell a preempted, requeued Job from one never admitted), and writes nothing to
the cluster: the failure branch of the state machine stops the Job.

The wait is measured from the last thing that started it, never from the Job's creation alone: its
creation, Kueue's last admission or eviction of its Workload, its last resume, and the creation or end of
its newest pod (a pod evicted from its node, replaced by one that waits for a node). So a Job admitted
hours ago whose pod was evicted two minutes ago has waited two minutes, and the time it ran never counts.
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
MAX_LIMIT_MIN = 7 * 24 * 60  # KueueSettings.queue_limit_min's bound: a week


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
    #: admitted by Kueue (or resumed) and still waiting: its pod waits for a node
    admitted: bool = False
    token: str = field(default="", repr=False)

    def waited_min(self, now: datetime) -> int:
        """Whole minutes this Job has waited since its wait last began (creation, admission, eviction, new pod)."""
        return max(0, int((now - self.waiting_since).total_seconds() // 60))

    def explain(self, now: datetime) -> str:
        """One line: queued (never admitted, preempted and requeued, or admitted and waiting for a node), running,
        done or failed."""
        if self.phase is not JobPhase.QUEUED:
            return self.phase.value
        if self.admitted:
            return f"admitted by {self.queue}; its pod waiting {self.waited_min(now)} min for a node"
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
    """A Kubernetes time (datetime from the client, RFC 3339 text in custom objects); None when absent or unreadable
    (one odd Workload must not stop the sweep of every Job)."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def _latest(*times: datetime | None) -> datetime | None:
    found = [t for t in times if t is not None]
    return max(found) if found else None


def _token(job: k8s.V1Job) -> str:
    spec = job.spec.template.spec if job.spec and job.spec.template else None
    for container in (spec.containers if spec else None) or []:
        for var in container.env or []:
            if var.name == TOKEN_ENV and var.value:
                # The Job builder escaped $ as $$ (Kubernetes' $(VAR) expansion); the container sees it unescaped.
                return str(var.value).replace("$$", "$")
    return ""


@dataclass(frozen=True)
class _Admission:
    """What Kueue's Workloads say: when it last admitted the Job and when it last evicted it (None: never)."""

    admitted: datetime | None = None
    evicted: datetime | None = None
    admitted_now: bool = False

    @property
    def preempted(self) -> bool:
        """Evicted and not admitted again since."""
        return self.evicted is not None and not self.admitted_now


def _admission(workloads: Sequence[Mapping[str, Any]]) -> _Admission:
    admitted: datetime | None = None
    evicted: datetime | None = None
    admitted_now = False
    for wl in workloads:
        status = wl.get("status") if isinstance(wl, Mapping) else None
        conditions = status.get("conditions") if isinstance(status, Mapping) else None
        for cond in conditions if isinstance(conditions, list) else []:
            if not isinstance(cond, Mapping):
                continue
            when = _parse_time(cond.get("lastTransitionTime"))
            if cond.get("type") == "Admitted" and cond.get("status") == "True":
                admitted, admitted_now = _latest(admitted, when), True
            elif cond.get("type") == "Evicted" and cond.get("status") == "True":
                evicted = _latest(evicted, when)
    return _Admission(admitted, evicted, admitted_now)


def _resumed(job: k8s.V1Job) -> datetime | None:
    """When the Job was last resumed (Kueue unsuspends what it admits): its Suspended condition turning False,
    or its startTime, which Kubernetes resets on every resume."""
    st = job.status or k8s.V1JobStatus()
    unsuspended = [c.last_transition_time for c in st.conditions or [] if c.type == "Suspended" and c.status == "False"]
    return _latest(_parse_time(st.start_time), *(_parse_time(t) for t in unsuspended))


def _pod_changed(pods: Sequence[k8s.V1Pod]) -> datetime | None:
    """When the Job's newest pod appeared, or its last pod ended (evicted, failed): the start of a wait for a node."""
    times: list[datetime | None] = []
    for pod in pods:
        times.append(_parse_time(pod.metadata.creation_timestamp if pod.metadata else None))
        status = pod.status
        if status is None or status.phase not in ("Failed", "Succeeded"):
            continue
        times += [_parse_time(c.last_transition_time) for c in status.conditions or []]
        for cs in status.container_statuses or []:
            if cs.state is not None and cs.state.terminated is not None:
                times.append(_parse_time(cs.state.terminated.finished_at))
    return _latest(*times)


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
    kueue = _admission(workloads)
    resumed = _resumed(job)
    suspended = bool(job.spec and job.spec.suspend)
    waiting_since = _latest(created, kueue.admitted, kueue.evicted, resumed, _pod_changed(pods)) or created
    return QueuedJob(
        name=meta.name or "",
        namespace=meta.namespace or "",
        queue=(meta.labels or {}).get(KUEUE_QUEUE_LABEL, ""),
        phase=_phase(job, pods),
        waiting_since=waiting_since,
        limit_min=_limit_min((meta.annotations or {}).get(QUEUE_LIMIT_ANNOTATION)),
        preempted=kueue.preempted,
        admitted=not suspended,  # Kueue creates its Jobs suspended and unsuspends what it admits
        token=_token(job),
    )


def _limit_min(value: str | None) -> int:
    """The Job's queueing limit in minutes; an annotation that is no whole number from 1 to a week gets the default."""
    text = (value or "").strip()
    if text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_LIMIT_MIN:
        return int(text)
    return DEFAULT_LIMIT_MIN


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
                cause = f"{job.explain(now)}: " + (
                    f"no node took its pod within the queueing limit of {job.limit_min} min (kueue.queue_limit_min); "
                    "check the GPU node group's capacity and taints, or raise the limit"
                    if job.admitted
                    else f"never admitted within the queueing limit of {job.limit_min} min (kueue.queue_limit_min); "
                    "give the ClusterQueue more quota or raise the limit"
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
