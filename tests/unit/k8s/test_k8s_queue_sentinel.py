"""What the queue sentinel makes of a Job: queued (not admitted, or waiting for a node), running, done or failed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kubernetes import client as k8s

from rlinf_bench.contracts import KueueSettings
from rlinf_k8s.jobs import jobs_for_request
from rlinf_k8s.queue_sentinel import QUEUE_ERROR, JobPhase, job_view, sweep
from tests.unit.k8s.conftest import make_request

CREATED = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)


def _job(*, suspend: bool = True, status: k8s.V1JobStatus | None = None) -> k8s.V1Job:
    req = make_request(runs=1, probes=[], kueue=KueueSettings(queue="rlinf-eval", queue_limit_min=60))
    job = jobs_for_request(req, extra_env={"RLINF_BENCH_TASK_TOKEN": "tok-1"})[0].job
    job.metadata.creation_timestamp = CREATED
    job.spec.suspend = suspend
    job.status = status or k8s.V1JobStatus()
    return job


def _pod(phase: str, waiting: str | None = None) -> k8s.V1Pod:
    statuses = None
    if waiting:
        state = k8s.V1ContainerState(waiting=k8s.V1ContainerStateWaiting(reason=waiting, message="pull failed"))
        statuses = [
            k8s.V1ContainerStatus(name="eval", image="x", image_id="", ready=False, restart_count=0, state=state)
        ]
    return k8s.V1Pod(
        metadata=k8s.V1ObjectMeta(name="p"), status=k8s.V1PodStatus(phase=phase, container_statuses=statuses)
    )


class _Sfn:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def send_task_heartbeat(self, **kw: Any) -> None:
        self.calls.append(("heartbeat", kw))

    def send_task_failure(self, **kw: Any) -> None:
        self.calls.append(("failure", kw))


def test_given_a_suspended_job_then_it_is_queued_behind_its_queue_with_its_limit_and_token() -> None:
    view = job_view(_job(), [], [])
    assert view.phase is JobPhase.QUEUED and view.queue == "rlinf-eval" and view.limit_min == 60
    assert view.token == "tok-1" and "tok-1" not in repr(view)
    assert view.explain(CREATED + timedelta(minutes=25)) == "queued for 25 min behind rlinf-eval"


def test_given_an_admitted_job_whose_pod_waits_for_a_node_then_it_is_still_queued() -> None:
    assert job_view(_job(suspend=False), [_pod("Pending")], []).phase is JobPhase.QUEUED


def test_given_running_done_failed_and_stuck_jobs_then_the_sentinel_leaves_them_alone() -> None:
    running = job_view(_job(suspend=False, status=k8s.V1JobStatus(active=1)), [_pod("Running")], [])
    done = job_view(_job(suspend=False, status=_cond("Complete")), [], [])
    failed = job_view(_job(suspend=False, status=_cond("Failed")), [], [])
    stuck = job_view(_job(suspend=False), [_pod("Pending", waiting="ImagePullBackOff")], [])
    assert [v.phase for v in (running, done, failed, stuck)] == [
        JobPhase.RUNNING,
        JobPhase.DONE,
        JobPhase.FAILED,
        JobPhase.FAILED,  # a wrong image is no queue: the heartbeat timeout and the failure branch name it
    ]
    sfn = _Sfn()
    sweep([running, done, failed, stuck], sfn, now=CREATED + timedelta(minutes=500))
    assert sfn.calls == []


def test_given_an_evicted_workload_then_the_wait_counts_from_the_eviction_and_says_preempted() -> None:
    evicted = CREATED + timedelta(minutes=90)
    wl = {
        "status": {
            "conditions": [
                {
                    "type": "Evicted",
                    "status": "True",
                    "reason": "Preempted",
                    "lastTransitionTime": evicted.strftime("%Y-%m-%dT%H:%M:%SZ"),
                }
            ]
        }
    }
    view = job_view(_job(), [], [wl])
    now = evicted + timedelta(minutes=10)
    assert view.preempted and view.waited_min(now) == 10
    assert view.explain(now) == "preempted (Kueue requeued it); queued for 10 min behind rlinf-eval"
    sfn = _Sfn()
    sweep([view], sfn, now=now)
    assert sfn.calls == [("heartbeat", {"taskToken": "tok-1"})]  # 100 min since creation, 10 since the eviction


def test_given_the_limit_reached_then_the_task_fails_naming_the_queue() -> None:
    sfn = _Sfn()
    report = sweep([job_view(_job(), [], [])], sfn, now=CREATED + timedelta(minutes=60))
    [(kind, kw)] = sfn.calls
    assert kind == "failure" and kw["error"] == QUEUE_ERROR
    assert kw["cause"].startswith("queued for 60 min behind rlinf-eval: never admitted")
    assert list(report.failed) == [job_view(_job(), [], []).name]


def _cond(kind: str) -> k8s.V1JobStatus:
    return k8s.V1JobStatus(conditions=[k8s.V1JobCondition(type=kind, status="True")])


def test_given_odd_annotations_and_workload_times_then_the_job_is_still_read_with_the_default_limit() -> None:
    job = _job()
    for limit in ("-5", "0", "inf", "², ", "99999999"):
        job.metadata.annotations["rlinf-bench/queue-limit-min"] = limit
        bad_time = {"status": {"conditions": [{"type": "Evicted", "status": "True", "lastTransitionTime": "soon"}]}}
        view = job_view(job, [], [bad_time, {"status": "not a mapping"}])
        assert view.limit_min == 120, limit  # the default, not an instant failure or a wait of years
        assert view.waiting_since == CREATED
