"""Queued is not silent: the queue sentinel keeps a Kueue Job's waiting task alive, then fails it past the limit.

Step Functions is moto's executing engine (it enforces HeartbeatSeconds); Kubernetes is the HTTP fake API
server, where the test plays Kueue's part (the Job stays suspended, its Workload is evicted, then admitted).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from rlinf_aws.execution_names import execution_name
from rlinf_aws.task_callback import TOKEN_ENV
from rlinf_bench.contracts import KueueSettings
from rlinf_k8s.api_client import ApiCaller, RetryPolicy, api_client_for_url
from rlinf_k8s.jobs import JobBundle, jobs_for_request
from rlinf_k8s.kubernetes_backend import KubernetesSubmitter
from rlinf_k8s.queue_sentinel import QUEUE_ERROR, JobPhase, QueuedJob, read_queue, sweep
from rlinf_k8s.submitter import SubmitResult
from tests.integration.k8s.conftest import SleepRecorder
from tests.integration.k8s.fake_apiserver import FakeApiServer
from tests.integration.workflow.harness import REGION, FakeJobs, _env_of
from tests.integration.workflow.test_job_callbacks import WAITER, finished, moto_server, start_waiting
from tests.integration.workflow.test_state_machine import request_for, results_for, stack
from tests.unit.k8s.conftest import make_request

pytestmark = pytest.mark.usefixtures("aws_env")
__all__ = ["moto_server"]  # the fixture, shared with the callback tests
HEARTBEAT_S = 4  # short, yet longer than a sweep on a busy machine
NS = "rlinf-eval"


@pytest.fixture
def fake() -> Iterator[FakeApiServer]:
    with FakeApiServer() as server:
        yield server


@pytest.fixture
def caller(fake: FakeApiServer) -> ApiCaller:
    policy = RetryPolicy(attempts=2, backoff_s=0.01, max_backoff_s=0.01, sleep=SleepRecorder())
    return ApiCaller(api_client_for_url(fake.url, token="static-test-token"), policy=policy)


@pytest.fixture(autouse=True)
def short_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    states: dict[str, dict[str, Any]] = WAITER["States"]  # type: ignore[assignment]
    monkeypatch.setitem(states["Wait"], "HeartbeatSeconds", HEARTBEAT_S)


def _submit_queued_job(caller: ApiCaller, token: str) -> str:
    """One suspended eval Job in queue rlinf-eval carrying the waiting task's token, as job_submitter makes it."""
    req = make_request(runs=1, probes=[], kueue=KueueSettings(queue="rlinf-eval", queue_limit_min=30))
    bundle = jobs_for_request(req, extra_env={"RLINF_BENCH_TASK_TOKEN": token})[0]
    KubernetesSubmitter(caller).submit(bundle)
    return bundle.name


def _keep_sweeping(caller: ApiCaller, sfn: Any, seconds: float) -> list[str]:
    beats: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        beats += sweep(read_queue(caller, NS), sfn).heartbeats
        time.sleep(0.5)
    return beats


def test_a_job_queued_longer_than_the_heartbeat_is_kept_alive_then_fails_past_the_limit_naming_the_queue(
    moto_server: str, caller: ApiCaller
) -> None:
    execution, token, sfn = start_waiting(moto_server)
    name = _submit_queued_job(caller, token)

    beats = _keep_sweeping(caller, sfn, seconds=2.5 * HEARTBEAT_S)  # past two heartbeat periods, still suspended

    assert name in beats
    assert sfn.describe_execution(executionArn=execution)["status"] == "RUNNING", "a queued run must not be failed"
    [job] = read_queue(caller, NS)
    assert job.phase is JobPhase.QUEUED
    later = datetime.now(UTC) + timedelta(minutes=31)
    report = sweep([job], sfn, now=later)
    assert name in report.failed
    desc = finished(sfn, execution)
    out = desc.get("output", "")
    assert QUEUE_ERROR in out and "behind rlinf-eval: never admitted" in out and "queued for 31 min" in out


def test_a_preempted_job_is_told_apart_and_completes_once_readmitted(
    moto_server: str, caller: ApiCaller, fake: FakeApiServer
) -> None:
    execution, token, sfn = start_waiting(moto_server)
    name = _submit_queued_job(caller, token)
    # It ran, then Kueue preempted it for training: Evicted, not admitted, the Job suspended again.
    evicted_at = (datetime.now(UTC) + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    fake.cluster.set_workload(
        NS,
        name,
        [
            {"type": "Evicted", "status": "True", "reason": "Preempted", "lastTransitionTime": evicted_at},
            {"type": "Admitted", "status": "False", "reason": "NoReservation", "lastTransitionTime": evicted_at},
            {"type": "Requeued", "status": "True", "reason": "Preempted", "lastTransitionTime": evicted_at},
        ],
    )
    assert _keep_sweeping(caller, sfn, seconds=2 * HEARTBEAT_S)
    [job] = read_queue(caller, NS)
    assert job.preempted and job.explain(datetime.now(UTC)).startswith("preempted (Kueue requeued it); queued for")
    assert sfn.describe_execution(executionArn=execution)["status"] == "RUNNING"

    # Re-admitted: the pod runs (and beats by itself), so the sentinel leaves it alone; then it succeeds.
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    fake.cluster.set_workload(NS, name, [{"type": "Admitted", "status": "True", "lastTransitionTime": now}])
    with fake.cluster.lock:
        fake.cluster.objects["jobs"][(NS, name)]["spec"]["suspend"] = False  # Kueue unsuspends what it admits
    fake.cluster.add_pod(NS, name, f"{name}-x", {"phase": "Running"})
    fake.cluster.set_job_status(NS, name, {"active": 1})
    assert read_queue(caller, NS)[0].phase is JobPhase.RUNNING
    assert sweep(read_queue(caller, NS), sfn).heartbeats == []
    sfn.send_task_success(taskToken=token, output='{"kind": "eval"}')
    assert finished(sfn, execution)["status"] == "SUCCEEDED"


class _QueuedJobs(FakeJobs):
    """FakeJobs that stay queued (silent) for ``duration_s`` before they run and call back, like Kueue Jobs."""

    bundles: dict[str, JobBundle]

    def submit(self, bundle: JobBundle) -> SubmitResult:
        self.bundles = getattr(self, "bundles", {})
        self.bundles[bundle.name] = bundle
        return super().submit(bundle)

    def queued(self) -> list[QueuedJob]:
        now = datetime.now(UTC)
        return [
            QueuedJob(
                name=name,
                namespace=b.namespace,
                queue="rlinf-eval",
                phase=JobPhase.QUEUED,
                waiting_since=now,
                limit_min=120,
                token=_env_of(b)[TOKEN_ENV],
            )
            for name, b in list(getattr(self, "bundles", {}).items())
            if name not in self.statuses
        ]


def test_the_evaluation_state_machine_keeps_queued_jobs_past_their_heartbeat_and_completes() -> None:
    jobs = _QueuedJobs(make_result=results_for(100, 0.5), duration_s=3 * HEARTBEAT_S)
    req = request_for(100, heartbeat_s=HEARTBEAT_S).model_copy(update={"kueue": KueueSettings(queue="rlinf-eval")})
    stop = threading.Event()
    with stack(jobs) as st:

        def sentinel() -> None:
            sfn = boto3.client("stepfunctions", region_name=REGION)
            while not stop.is_set():
                sweep(jobs.queued(), sfn)
                stop.wait(0.5)

        thread = threading.Thread(target=sentinel, daemon=True)
        thread.start()
        try:
            desc = st.run(req.to_json(), execution_name(req), timeout_s=240)
            events = st.history(desc["executionArn"])
        finally:
            stop.set()
            thread.join(timeout=5)
    assert desc["status"] == "SUCCEEDED", desc
    assert not any(e["type"] == "TaskTimedOut" for e in events), "a queued Job was declared silent"
    assert not any(e["type"] == "TaskFailed" for e in events)
