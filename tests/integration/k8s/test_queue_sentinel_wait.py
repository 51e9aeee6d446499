"""The queue sentinel measures the wait it claims, read with the kubernetes client from the fake API server:
from the last admission, eviction or new pod, never the time a Job ran."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from rlinf_bench.contracts import KueueSettings
from rlinf_k8s.api_client import ApiCaller
from rlinf_k8s.jobs import jobs_for_request
from rlinf_k8s.kubernetes_backend import KubernetesSubmitter
from rlinf_k8s.queue_sentinel import QUEUE_ERROR, JobPhase, read_queue, sweep
from tests.integration.k8s.fake_apiserver import FakeApiServer
from tests.unit.k8s.conftest import make_request

NS = "rlinf-eval"
NOW = datetime.now(UTC).replace(microsecond=0)


def stamp(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


class TaskTokens:
    """Step Functions' task-token calls, recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def send_task_heartbeat(self, **kw: Any) -> None:
        self.calls.append(("heartbeat", kw))

    def send_task_failure(self, **kw: Any) -> None:
        self.calls.append(("failure", kw))


def admitted_job(caller: ApiCaller, fake: FakeApiServer, *, created_min_ago: float, admitted_min_ago: float) -> str:
    """A Kueue eval Job (limit 120 min) created and admitted that long ago: unsuspended, its Workload Admitted."""
    req = make_request(runs=1, probes=[], kueue=KueueSettings(queue="rlinf-eval", queue_limit_min=120))
    bundle = jobs_for_request(req, extra_env={"RLINF_BENCH_TASK_TOKEN": "tok-1"})[0]
    KubernetesSubmitter(caller).submit(bundle)
    admitted = stamp(admitted_min_ago)
    fake.cluster.set_workload(NS, bundle.name, [{"type": "Admitted", "status": "True", "lastTransitionTime": admitted}])
    with fake.cluster.lock:
        job = fake.cluster.objects["jobs"][(NS, bundle.name)]
        job["metadata"]["creationTimestamp"] = stamp(created_min_ago)
        job["spec"]["suspend"] = False
        job["status"] = {"active": 1, "startTime": admitted}
    return bundle.name


def add_pod(fake: FakeApiServer, job: str, name: str, created_min_ago: float, status: dict[str, Any]) -> None:
    fake.cluster.add_pod(NS, job, name, status)
    with fake.cluster.lock:
        fake.cluster.objects["pods"][(NS, name)]["metadata"]["creationTimestamp"] = stamp(created_min_ago)


def evicted_pod(ended_min_ago: float) -> dict[str, Any]:
    return {
        "phase": "Failed",
        "reason": "Evicted",
        "message": "The node was low on resource: memory.",
        "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": stamp(ended_min_ago)}],
    }


def pending_pod() -> dict[str, Any]:
    return {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
    }


def test_a_job_admitted_hours_ago_whose_pod_was_evicted_and_waits_2_min_for_a_node_is_kept_alive(
    caller: ApiCaller, fake: FakeApiServer
) -> None:
    name = admitted_job(caller, fake, created_min_ago=185, admitted_min_ago=180)
    add_pod(fake, name, f"{name}-a", 180, evicted_pod(ended_min_ago=2))  # ran for 178 min, then evicted
    add_pod(fake, name, f"{name}-b", 2, pending_pod())  # its replacement waits for a node

    [job] = read_queue(caller, NS)
    tokens = TaskTokens()
    report = sweep([job], tokens, now=NOW)

    assert job.phase is JobPhase.QUEUED and job.admitted
    assert job.waited_min(NOW) == 2
    assert job.explain(NOW) == "admitted by rlinf-eval; its pod waiting 2 min for a node"
    assert report.heartbeats == [name] and report.failed == {}
    assert tokens.calls == [("heartbeat", {"taskToken": "tok-1"})]


def test_a_pod_that_waits_past_the_limit_for_a_node_fails_saying_so_not_never_admitted(
    caller: ApiCaller, fake: FakeApiServer
) -> None:
    name = admitted_job(caller, fake, created_min_ago=300, admitted_min_ago=290)
    add_pod(fake, name, f"{name}-a", 290, evicted_pod(ended_min_ago=125))
    add_pod(fake, name, f"{name}-b", 125, pending_pod())

    [job] = read_queue(caller, NS)
    tokens = TaskTokens()
    report = sweep([job], tokens, now=NOW)

    [(kind, call)] = tokens.calls
    assert kind == "failure" and call["error"] == QUEUE_ERROR
    assert call["cause"].startswith("admitted by rlinf-eval; its pod waiting 125 min for a node: no node took its pod")
    assert "never admitted" not in call["cause"] and report.failed[name] == call["cause"]


def test_a_job_admitted_long_after_it_was_created_waits_from_its_admission_not_its_creation(
    caller: ApiCaller, fake: FakeApiServer
) -> None:
    name = admitted_job(caller, fake, created_min_ago=200, admitted_min_ago=5)  # queued 195 min, admitted 5 ago
    add_pod(fake, name, f"{name}-a", 5, pending_pod())

    [job] = read_queue(caller, NS)

    assert job.waited_min(NOW) == 5
    assert sweep([job], TaskTokens(), now=NOW).heartbeats == [name]


def test_a_job_preempted_after_running_for_hours_waits_from_its_eviction(
    caller: ApiCaller, fake: FakeApiServer
) -> None:
    name = admitted_job(caller, fake, created_min_ago=400, admitted_min_ago=390)
    fake.cluster.set_workload(
        NS,
        name,
        [
            {"type": "Evicted", "status": "True", "reason": "Preempted", "lastTransitionTime": stamp(10)},
            {"type": "Admitted", "status": "False", "reason": "NoReservation", "lastTransitionTime": stamp(10)},
        ],
    )
    with fake.cluster.lock:
        fake.cluster.objects["jobs"][(NS, name)]["spec"]["suspend"] = True  # Kueue suspends what it evicts

    [job] = read_queue(caller, NS)

    assert job.preempted and not job.admitted and job.waited_min(NOW) == 10
    assert job.explain(NOW) == "preempted (Kueue requeued it); queued for 10 min behind rlinf-eval"
