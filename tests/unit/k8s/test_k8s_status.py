"""Job + pods -> one status with the reason a user can act on."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s

from rlinf_k8s.job_status import job_status_from
from rlinf_k8s.submitter import JobState


def _job(conditions: list[dict[str, str]] | None = None, **status: Any) -> k8s.V1Job:
    conds = [
        k8s.V1JobCondition(type=c["type"], status="True", reason=c.get("reason"), message=c.get("message"))
        for c in conditions or []
    ]
    return k8s.V1Job(
        metadata=k8s.V1ObjectMeta(name="eval-x", namespace="rlinf-eval"),
        status=k8s.V1JobStatus(conditions=conds or None, **status),
    )


def _pod(
    phase: str = "Running",
    *,
    reason: str | None = None,
    waiting: str | None = None,
    terminated: tuple[str, int] | None = None,
    unschedulable: str | None = None,
) -> k8s.V1Pod:
    state = k8s.V1ContainerState(
        waiting=k8s.V1ContainerStateWaiting(reason=waiting, message=f"{waiting} msg") if waiting else None,
        terminated=k8s.V1ContainerStateTerminated(reason=terminated[0], exit_code=terminated[1])
        if terminated
        else None,
    )
    cs = k8s.V1ContainerStatus(name="eval", image="img", image_id="", ready=False, restart_count=0, state=state)
    conditions = (
        [k8s.V1PodCondition(type="PodScheduled", status="False", reason="Unschedulable", message=unschedulable)]
        if unschedulable
        else None
    )
    return k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name="eval-x-abcde"),
        status=k8s.V1PodStatus(
            phase=phase,
            reason=reason,
            message="node low on memory" if reason else None,
            container_statuses=[cs],
            conditions=conditions,
        ),
    )


CASES = [
    ("no pods yet", _job(), [], JobState.PENDING, None),
    ("running", _job(active=1), [_pod("Running")], JobState.RUNNING, None),
    ("complete", _job([{"type": "Complete"}], succeeded=1), [], JobState.SUCCEEDED, None),
    (
        "oom",
        _job([{"type": "Failed", "reason": "BackoffLimitExceeded"}], failed=2),
        [_pod("Failed", terminated=("OOMKilled", 137))],
        JobState.FAILED,
        "OOMKilled",
    ),
    (
        "plain non-zero exit",
        _job([{"type": "Failed", "reason": "BackoffLimitExceeded"}], failed=2),
        [_pod("Failed", terminated=("Error", 1))],
        JobState.FAILED,
        "BackoffLimitExceeded",
    ),
    (
        "evicted",
        _job([{"type": "Failed", "reason": "BackoffLimitExceeded"}], failed=1),
        [_pod("Failed", reason="Evicted")],
        JobState.FAILED,
        "Evicted",
    ),
    (
        "deadline",
        _job(
            [
                {
                    "type": "Failed",
                    "reason": "DeadlineExceeded",
                    "message": "Job was active longer than specified deadline",
                }
            ]
        ),
        [_pod("Failed", terminated=("Error", 143))],
        JobState.FAILED,
        "DeadlineExceeded",
    ),
    (
        "image pull backoff",
        _job(active=1),
        [_pod("Pending", waiting="ImagePullBackOff")],
        JobState.FAILED,
        "ImagePullBackOff",
    ),
    ("first pull error", _job(active=1), [_pod("Pending", waiting="ErrImagePull")], JobState.PENDING, "ErrImagePull"),
    (
        "fail-fast exit code",
        _job([{"type": "Failed", "reason": "PodFailurePolicy", "message": "exit code 2 matching FailJob rule"}]),
        [_pod("Failed", terminated=("Error", 2))],
        JobState.FAILED,
        "PodFailurePolicy",
    ),
    ("creating", _job(active=1), [_pod("Pending", waiting="ContainerCreating")], JobState.PENDING, None),
    (
        "failure target",
        _job([{"type": "FailureTarget", "reason": "DeadlineExceeded"}]),
        [],
        JobState.FAILED,
        "DeadlineExceeded",
    ),
]


@pytest.mark.parametrize(("case", "job", "pods", "state", "reason"), CASES, ids=[c[0] for c in CASES])
def test_given_job_and_pods_then_state_and_reason(
    case: str, job: k8s.V1Job, pods: list[k8s.V1Pod], state: JobState, reason: str | None
) -> None:
    status = job_status_from(job, pods)

    assert status.state == state
    assert status.reason == reason


def test_given_an_oom_then_the_message_keeps_the_jobs_verdict_and_exit_code() -> None:
    status = job_status_from(
        _job(
            [
                {
                    "type": "Failed",
                    "reason": "BackoffLimitExceeded",
                    "message": "Job has reached the specified backoff limit",
                }
            ]
        ),
        [_pod("Failed", terminated=("OOMKilled", 137))],
    )

    assert status.exit_code == 137
    assert "BackoffLimitExceeded" in status.message and "eval-x-abcde" in status.message
    assert status.describe().startswith("Job rlinf-eval/eval-x failed (OOMKilled:")


def test_given_an_unschedulable_pod_then_pending_says_why() -> None:
    status = job_status_from(_job(active=1), [_pod("Pending", unschedulable="0/4 nodes have free nvidia.com/gpu")])

    assert status.state == JobState.PENDING
    assert "nvidia.com/gpu" in status.message
