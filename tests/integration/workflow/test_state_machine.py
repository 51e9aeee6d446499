"""The evaluation state machine, executed by moto's engine, with the real handlers and callbacks.

GIVEN a checkpoint's EvalRequest, WHEN the execution runs with Jobs that call back (or do not), THEN
the verdict reaches MLflow (a real server over HTTP), email (SNS) and Slack, and every failure is named.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rlinf_aws.execution_names import execution_name
from rlinf_bench.contracts import CheckpointRef, CheckpointReport, EvalRequest, EvalRun, ProbeSpec, SuiteSelection
from rlinf_bench.contracts.request import WorkflowSettings
from rlinf_k8s.jobs import JobBundle
from rlinf_local.moto_patches import moto_fixes
from tests.integration.workflow.conftest import MlflowServer, SlackCatcher, free_port
from tests.integration.workflow.harness import (
    BUCKET,
    FAIL,
    REGION,
    SILENT,
    SUCCEED,
    UNREACHABLE,
    FakeJobs,
    WorkflowStack,
    probe_result,
)
from tests.unit.stats.runfactory import make_run

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("aws_env")]
MOTO = {"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}


def ckpt(step: int) -> CheckpointRef:
    return CheckpointRef(uri=f"s3://{BUCKET}/exp/checkpoints/global_step_{step}", experiment="exp", global_step=step)


#: the probes' required arguments (Plan refuses a probe that cannot start)
PROBE_ARGS = {"storage": ["--path", "/fsx"]}


def request_for(step: int, *, heartbeat_s: int = 1800, probes: tuple[str, ...] = ("gpu", "storage")) -> EvalRequest:
    return EvalRequest(
        checkpoint=ckpt(step),
        suites=[SuiteSelection(name="libero_spatial", tasks=[0, 1]), SuiteSelection(name="libero_goal", tasks=[0, 1])],
        runs=3,
        trials_per_task=4,
        probes=[ProbeSpec(name=p, args=PROBE_ARGS.get(p, [])) for p in probes],
        baselines=["libero/openvla-oft-rlinf", "previous", "best"],
        workflow=WorkflowSettings(heartbeat_s=heartbeat_s),
    )


def results_for(step: int, rate: float) -> Callable[[JobBundle], Any]:
    """Eval Jobs write a RunResult whose episodes succeed on the first ``rate`` share of the states."""

    def make(bundle: JobBundle) -> Any:
        command = list(bundle.job.spec.template.spec.containers[0].command or [])
        if "infra_probes" in command:
            return probe_result(bundle)
        run = EvalRun.model_validate_json(command[command.index("--request") + 1])
        wins = round(rate * 4)
        outcomes = {t: [i < wins for i in range(4)] for t in (0, 1)}
        result = make_run(outcomes, suite=run.suite, run_index=run.run_index, ckpt=ckpt(step), policy=run.policy)
        return result.model_copy(update={"seed": run.seed, "request_id": run.request_id})

    return make


@contextmanager
def stack(jobs: FakeJobs, *, mlflow_uri: str = "", slack_url: str = "") -> Iterator[WorkflowStack]:
    with mock_aws(config=MOTO), moto_fixes():
        st = WorkflowStack(jobs=jobs, mlflow_uri=mlflow_uri, slack_url=slack_url)
        with st.lambdas.installed():
            yield st.deploy()


def report_at(uri: str) -> CheckpointReport:
    loc = uri.removeprefix("s3://").split("/", 1)
    body = boto3.client("s3", region_name=REGION).get_object(Bucket=loc[0], Key=loc[1])["Body"].read()
    return CheckpointReport.from_json(body, source=uri)


def find_parents(server: MlflowServer) -> list[Any]:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(server.uri)
    exp = client.get_experiment_by_name("RLinf")
    if exp is None:
        return []
    # The brief's own query.
    return list(client.search_runs([exp.experiment_id], filter_string="params.val_only = 'True'"))


def test_happy_path_publishes_one_report_to_mlflow_email_and_slack(
    mlflow_server: MlflowServer, slack: SlackCatcher
) -> None:
    jobs = FakeJobs(make_result=results_for(100, 0.5))
    req = request_for(100)
    with stack(jobs, mlflow_uri=mlflow_server.uri, slack_url=slack.url) as st:
        # A real server over HTTP on a shared 2-core box: publishing can take a while.
        desc = st.run(req.to_json(), execution_name(req), timeout_s=600)
        assert desc["status"] == "SUCCEEDED", desc
        out = json.loads(desc["output"])
        emails = st.emails()
        report = report_at(out["report_uri"])
    assert len(jobs.submitted) == 2 * 3 + 2
    assert out["mlflow_run_id"] and not out["mlflow_error"]
    parents = [r for r in find_parents(mlflow_server) if r.info.run_id == out["mlflow_run_id"]]
    assert parents and parents[0].data.metrics["success_rate"] == pytest.approx(0.5)
    assert {s.suite for s in report.suites} == {"libero_spatial", "libero_goal"}
    assert all(s.runs_completed == 3 for s in report.suites)
    assert len(emails) == 1 and "SR 50.0%" in emails[0]
    assert len(slack.received) == 1 and slack.received[0]["blocks"]
    assert {p.probe for p in report.probes} == {"gpu", "storage"}


def test_a_failed_run_is_reported_and_its_suite_is_incomplete(slack: SlackCatcher) -> None:
    def behaviour(bundle: JobBundle) -> str:
        return FAIL if bundle.name.endswith("libero-goal-r1") else SUCCEED

    jobs = FakeJobs(make_result=results_for(100, 0.5), behaviour=behaviour)
    req = request_for(100)
    with stack(jobs, slack_url=slack.url) as st:
        desc = st.run(req.to_json(), execution_name(req))
        assert desc["status"] == "SUCCEEDED", st.emails()
        report = report_at(json.loads(desc["output"])["report_uri"])
        emails = st.emails()
    goal = report.suite("libero_goal")
    assert goal is not None and not goal.complete and goal.runs_completed == 2
    failed = [r for r in goal.runs if r.status.value == "failed"]
    assert len(failed) == 1 and "simulator exploded on task 3" in (failed[0].error or "")
    assert all(v.value.value == "incomplete" for v in goal.verdicts)
    spatial = report.suite("libero_spatial")
    assert spatial is not None and spatial.complete
    assert "libero_goal run 1" in emails[0] and "simulator exploded" in emails[0]
    slack_text = json.dumps(slack.received[0])
    assert "libero_goal run 1" in slack_text


def test_a_job_that_never_calls_back_fails_on_heartbeat_with_the_jobs_reason(slack: SlackCatcher) -> None:
    def behaviour(bundle: JobBundle) -> str:
        return SILENT if bundle.name.endswith("libero-spatial-r0") else SUCCEED

    jobs = FakeJobs(make_result=results_for(100, 0.5), behaviour=behaviour)
    req = request_for(100, heartbeat_s=2)
    with stack(jobs, slack_url=slack.url) as st:
        desc = st.run(req.to_json(), execution_name(req), timeout_s=90)
        assert desc["status"] == "SUCCEEDED"
        emails = st.emails()
        events = st.history(desc["executionArn"])
    assert any(e["type"] == "TaskTimedOut" or "HeartbeatTimeout" in json.dumps(e, default=str) for e in events)
    assert "libero_spatial run 0: OOMKilled" in emails[0] and "went silent" in emails[0]


def test_all_runs_failing_sends_a_failure_notice_and_publishes_no_verdict(mlflow_server: MlflowServer) -> None:
    jobs = FakeJobs(
        make_result=results_for(300, 0.5), behaviour=lambda b: FAIL if b.name.startswith("eval") else SUCCEED
    )
    req = request_for(300)
    with stack(jobs, mlflow_uri=mlflow_server.uri) as st:
        desc = st.run(req.to_json(), execution_name(req), timeout_s=600)
        emails = st.emails()
    assert desc["status"] == "FAILED"
    assert len(emails) == 1 and "Evaluation failed" in emails[0] and "AllRunsFailedError" in emails[0]
    assert not [r for r in find_parents(mlflow_server) if r.data.params.get("global_step") == "300"]


def test_mlflow_down_still_sends_the_message_and_keeps_the_report() -> None:
    jobs = FakeJobs(make_result=results_for(100, 0.5))
    req = request_for(100, probes=())
    dead = f"http://127.0.0.1:{free_port()}"
    with stack(jobs, mlflow_uri=dead) as st:
        desc = st.run(req.to_json(), execution_name(req), timeout_s=240)
        assert desc["status"] == "SUCCEEDED"
        out = json.loads(desc["output"])
        emails = st.emails()
        report = report_at(out["report_uri"])
    assert out["mlflow_run_id"] is None and "unreachable" in out["mlflow_error"]
    assert emails[0].startswith("MLflow publish failed:")
    assert report.success_rate == pytest.approx(0.5)


def test_a_second_checkpoint_is_compared_with_the_first_read_back_from_mlflow(mlflow_server: MlflowServer) -> None:
    first = request_for(1000, probes=())
    second = request_for(2000, probes=())
    with stack(FakeJobs(make_result=results_for(1000, 0.5)), mlflow_uri=mlflow_server.uri) as st:
        assert st.run(first.to_json(), execution_name(first), timeout_s=600)["status"] == "SUCCEEDED"
    with stack(FakeJobs(make_result=results_for(2000, 1.0)), mlflow_uri=mlflow_server.uri) as st:
        desc = st.run(second.to_json(), execution_name(second), timeout_s=600)
        report = report_at(json.loads(desc["output"])["report_uri"])
    spatial = report.suite("libero_spatial")
    assert spatial is not None
    previous = [v for v in spatial.verdicts if v.kind == "previous"]
    assert previous and previous[0].reference_label == "global_step 1000" and previous[0].paired


def test_an_unreachable_cluster_fails_that_run_with_the_reason() -> None:
    jobs = FakeJobs(
        make_result=results_for(100, 0.5),
        behaviour=lambda b: UNREACHABLE if b.name.endswith("libero-goal-r2") else SUCCEED,
    )
    req = request_for(100, probes=())
    with stack(jobs) as st:
        desc = st.run(req.to_json(), execution_name(req))
        assert desc["status"] == "SUCCEEDED", st.emails()
        report = report_at(json.loads(desc["output"])["report_uri"])
        emails = st.emails()
    goal = report.suite("libero_goal")
    assert goal is not None and not goal.complete
    assert "ClusterUnreachableError" in emails[0] and "did not answer after 4 attempts" in emails[0]


def test_a_failing_slack_webhook_leaves_the_email_and_puts_the_message_in_the_dlq(slack: SlackCatcher) -> None:
    slack.fail = True
    jobs = FakeJobs(make_result=results_for(100, 0.5))
    req = request_for(100, probes=())
    with stack(jobs, slack_url=slack.url) as st:
        desc = st.run(req.to_json(), execution_name(req))
        assert desc["status"] == "SUCCEEDED"
        emails = st.emails()
        dlq = boto3.client("sqs", region_name=REGION).receive_message(
            QueueUrl=st.slack_dlq_url, MessageAttributeNames=["All"]
        )["Messages"]
    assert len(emails) == 1 and not slack.received
    assert len(dlq) == 1 and "Slack webhook failed" in dlq[0]["MessageAttributes"]["ErrorMessage"]["StringValue"]


def test_sharded_runs_go_through_the_map_and_a_failed_shard_leaves_only_its_run_incomplete() -> None:
    def make(bundle: JobBundle) -> Any:
        command = list(bundle.job.spec.template.spec.containers[0].command or [])
        if "infra_probes" in command:
            return probe_result(bundle)
        run = EvalRun.model_validate_json(command[command.index("--request") + 1])
        outcomes = {t: [i < 2 for i in range(4)] for t in run.task_ids or (0, 1)}
        result = make_run(outcomes, suite=run.suite, run_index=run.run_index, ckpt=ckpt(100), policy=run.policy)
        return result.model_copy(update={"seed": run.seed, "request_id": run.request_id})

    jobs = FakeJobs(make_result=make, behaviour=lambda b: FAIL if b.name.endswith("libero-goal-r1-s2of2") else SUCCEED)
    req = request_for(100, probes=("gpu",)).model_copy(update={"shards": 2})
    with stack(jobs) as st:
        desc = st.run(req.to_json(), execution_name(req))
        assert desc["status"] == "SUCCEEDED", st.emails()
        report = report_at(json.loads(desc["output"])["report_uri"])
    assert len([n for n in jobs.submitted if n.startswith("eval-")]) == 12  # 2 suites x 3 runs x 2 shards
    spatial, goal = report.suite("libero_spatial"), report.suite("libero_goal")
    assert spatial is not None and spatial.complete and spatial.success_rate_mean == 0.5
    assert goal is not None and not goal.complete and goal.runs_completed == 2
    (lost,) = [r for r in goal.runs if r.status.value != "complete"]
    assert lost.run_index == 1 and "libero_goal run 1 shard 2/2 (tasks [1])" in (lost.error or "")


def test_a_job_that_calls_back_before_its_task_waits_is_still_heard(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto sets a task's heartbeat up only after invoking the submitter; a callback in between was lost, and the
    execution waited heartbeat_s (30 min) for it. Here every callback is made to arrive first, as a Job that fails
    at once (or any Job on a loaded machine) does; rlinf_local.moto_patches wakes the task."""
    from moto.stepfunctions.parser.asl.eval.callback.callback import CallbackEndpoint

    set_up = CallbackEndpoint.setup_heartbeat_endpoint

    def after_the_callback(self: Any, heartbeat_seconds: int) -> Any:
        self._notify_event.wait(timeout=10)  # the Job's callback has arrived before the heartbeat exists
        return set_up(self, heartbeat_seconds)

    monkeypatch.setattr(CallbackEndpoint, "setup_heartbeat_endpoint", after_the_callback)
    jobs = FakeJobs(
        make_result=results_for(100, 0.5),
        behaviour=lambda b: FAIL if b.name.endswith("libero-goal-r1") else SUCCEED,
        duration_s=0,
    )
    req = request_for(100, probes=("gpu",))
    with stack(jobs) as st:
        desc = st.run(req.to_json(), execution_name(req), timeout_s=90)
        assert desc["status"] == "SUCCEEDED", desc
        report = report_at(json.loads(desc["output"])["report_uri"])
    spatial, goal = report.suite("libero_spatial"), report.suite("libero_goal")
    assert spatial is not None and spatial.complete and spatial.success_rate_mean == 0.5
    assert goal is not None and goal.runs_completed == 2
    (lost,) = [r for r in goal.runs if r.status.value != "complete"]
    assert "simulator exploded on task 3" in (lost.error or "")  # the Job's own reason, not a heartbeat timeout
