"""Turn a Job and its pods into one :class:`JobStatus` with the most useful failure reason.

The Job's own condition says *that* it failed (BackoffLimitExceeded, DeadlineExceeded); the pods
often say *why* (OOMKilled, Evicted, ImagePullBackOff). We report the more specific of the two and
keep the other in the message, so a notification reads "OOMKilled" rather than "BackoffLimitExceeded".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubernetes import client as k8s

from rlinf_k8s.submitter import FailureReason, JobState, JobStatus

__all__ = ["JOB_NAME_LABEL", "job_status_from"]

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
# A pod stuck in one of these will not recover by itself; the Job would only fail at its deadline,
# hours later, so we report it as failed now.
STUCK_REASONS = frozenset(
    {
        FailureReason.IMAGE_PULL_BACKOFF,
        FailureReason.INVALID_IMAGE_NAME,
        FailureReason.CREATE_CONTAINER_CONFIG_ERROR,
    }
)
# Pod-level causes, most specific first.
_PRIORITY = (
    FailureReason.OOM_KILLED,
    FailureReason.EVICTED,
    FailureReason.IMAGE_PULL_BACKOFF,
    FailureReason.INVALID_IMAGE_NAME,
    FailureReason.CREATE_CONTAINER_CONFIG_ERROR,
    FailureReason.ERR_IMAGE_PULL,
    FailureReason.ERROR,
)


@dataclass(frozen=True)
class _PodProblem:
    reason: str
    message: str
    exit_code: int | None = None


def _container_problem(pod_name: str, cs: k8s.V1ContainerStatus) -> _PodProblem | None:
    for state in (cs.state, cs.last_state):
        if state is None:
            continue
        if state.terminated is not None and state.terminated.exit_code != 0:
            t = state.terminated
            reason = t.reason or FailureReason.ERROR
            msg = f"pod {pod_name} container {cs.name} exited with code {t.exit_code}" + (
                f": {t.message}" if t.message else ""
            )
            return _PodProblem(reason, msg, t.exit_code)
        if state.waiting is not None and state.waiting.reason in {r.value for r in _PRIORITY}:
            w = state.waiting
            return _PodProblem(w.reason or "", f"pod {pod_name} container {cs.name}: {w.message or w.reason}")
    return None


def _pod_problems(pods: Sequence[k8s.V1Pod]) -> list[_PodProblem]:
    out: list[_PodProblem] = []
    for pod in pods:
        name = (pod.metadata.name if pod.metadata else None) or "?"
        st = pod.status
        if st is None:
            continue
        if st.reason == FailureReason.EVICTED:
            out.append(_PodProblem(FailureReason.EVICTED, f"pod {name} evicted: {st.message or ''}".rstrip(": ")))
            continue
        for cs in [*(st.init_container_statuses or []), *(st.container_statuses or [])]:
            problem = _container_problem(name, cs)
            if problem is not None:
                out.append(problem)
    return out


def _pick(problems: list[_PodProblem]) -> _PodProblem | None:
    def rank(p: _PodProblem) -> int:
        for i, reason in enumerate(_PRIORITY):
            if p.reason == reason:
                return i
        return len(_PRIORITY)

    return min(problems, key=rank) if problems else None


def _unschedulable(pods: Sequence[k8s.V1Pod]) -> str:
    for pod in pods:
        for cond in (pod.status.conditions if pod.status else None) or []:
            if cond.type == "PodScheduled" and cond.status == "False" and cond.message:
                return f"pod {pod.metadata.name if pod.metadata else '?'} not scheduled: {cond.message}"
    return ""


def job_status_from(job: k8s.V1Job, pods: Sequence[k8s.V1Pod]) -> JobStatus:
    """The status of ``job`` given the pods it created (any order)."""
    meta = job.metadata or k8s.V1ObjectMeta()
    st = job.status or k8s.V1JobStatus()
    base = {
        "name": meta.name or "",
        "namespace": meta.namespace or "",
        "active": st.active or 0,
        "succeeded": st.succeeded or 0,
        "failed": st.failed or 0,
    }
    conds = {c.type: c for c in (st.conditions or []) if c.status == "True"}
    problem = _pick(_pod_problems(pods))
    exit_code = problem.exit_code if problem else None
    if "Complete" in conds or "SuccessCriteriaMet" in conds:
        return JobStatus(state=JobState.SUCCEEDED, **base)
    failed = conds.get("Failed") or conds.get("FailureTarget")
    if failed is not None:
        job_reason = failed.reason or FailureReason.ERROR
        job_msg = failed.message or ""
        if job_reason == FailureReason.BACKOFF_LIMIT_EXCEEDED and problem is not None:
            # The pods know the real cause; keep the Job's verdict in the message.
            msg = f"{problem.message} ({job_reason}: {job_msg})" if job_msg else f"{problem.message} ({job_reason})"
            reason = problem.reason if problem.reason != FailureReason.ERROR else job_reason
            return JobStatus(state=JobState.FAILED, reason=reason, message=msg, exit_code=exit_code, **base)
        return JobStatus(state=JobState.FAILED, reason=job_reason, message=job_msg, exit_code=exit_code, **base)
    if problem is not None and problem.reason in STUCK_REASONS:
        return JobStatus(state=JobState.FAILED, reason=problem.reason, message=problem.message, **base)
    if any(p.status is not None and p.status.phase == "Running" for p in pods):
        return JobStatus(state=JobState.RUNNING, **base)
    # Pending: say why when the pods tell us (image still pulling, no node with a free GPU...).
    if problem is not None:
        return JobStatus(state=JobState.PENDING, reason=problem.reason, message=problem.message, **base)
    return JobStatus(state=JobState.PENDING, message=_unschedulable(pods), **base)
