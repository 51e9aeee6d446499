"""events/*.json, the samples for `sam local invoke <Function> -e events/<name>.json`, run through the real
handlers here (sam local needs Docker): AWS is moto, Kubernetes is the fake API server over HTTP."""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.state_plan import plan
from rlinf_bench.contracts.workflow import (
    AggregateInput,
    FailureNotifyInput,
    OutcomeStatus,
    PlanInput,
    RunFailureInput,
    RunOutcome,
    StateError,
    SubmitInput,
)
from rlinf_local.lambdas import LocalLambdaContext, load_app
from tests.integration.k8s.fake_apiserver import FakeApiServer
from tests.unit.stats.runfactory import make_run

REPO = Path(__file__).resolve().parents[3]
EVENTS = REPO / "events"
REGION = "us-east-1"
RESULTS = "s3://rlinf-bench-checkpoints/results"
BUCKET = "rlinf-bench-checkpoints"
UPDATE = os.environ.get("RLINF_BENCH_UPDATE_EVENTS") == "1"


def event(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return result


def _doc(model: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(model.model_dump_json(by_alias=True, exclude_none=True))
    return result


def derived_events() -> dict[str, dict[str, Any]]:
    """Every workflow sample, derived from events/request_planner.json (the one kept by hand) through the
    pipeline's own models, so the samples follow the contracts."""
    planner = PlanInput.model_validate(event("request_planner.json"))
    planned = plan(planner, PipelineSettings(results_prefix=RESULTS, namespace="rlinf-eval"))
    item, request, execution = planned.eval_items[0], planned.request, planned.execution
    token = "EXAMPLE-TASK-TOKEN"
    evals = [
        RunOutcome(
            status=OutcomeStatus.SUCCEEDED,
            kind="eval",
            job_name=i.job_name,
            result_uri=i.result_uri,
            suite=i.run.suite if i.run else None,
            run_index=i.run.run_index if i.run else None,
        )
        for i in planned.eval_items
    ]
    probes = [  # a probe whose image could not be pulled: reported, never averaged away
        RunOutcome(
            status=OutcomeStatus.FAILED,
            kind="probe",
            job_name=i.job_name,
            result_uri=i.result_uri,
            probe=i.probe.name if i.probe else None,
            error="ImagePullBackOff",
            cause="Back-off pulling image",
            job_reason="ImagePullBackOff",
        )
        for i in planned.probe_items
    ]
    heartbeat = StateError(Error="States.HeartbeatTimeout", Cause="no heartbeat for 600 s")
    plan_error = StateError(
        Error="ConfigError",
        Cause="suites[0].name: unknown suite 'libero_11'; allowed: libero_spatial, libero_object, libero_goal, "
        "libero_10, libero_90",
    )
    return {
        "job_submitter.json": _doc(SubmitInput(job=planned.job, item=item, task_token=token)) | {"task_token": token},
        "failure_notifier-explain_run.json": _doc(RunFailureInput(item=item, error=heartbeat)),
        "failure_notifier-notify.json": _doc(
            FailureNotifyInput(request=request, execution=execution, stage="plan", error=plan_error)
        ),
        "results_aggregator.json": _doc(
            AggregateInput(
                request=request,
                execution=execution,
                result_root=planned.result_root,
                eval_items=planned.eval_items,
                outcomes=[evals, probes],
            )
        ),
    }


def check_sample(name: str, current: dict[str, Any]) -> None:
    """The committed sample equals what the code produces now (RLINF_BENCH_UPDATE_EVENTS=1 rewrites it)."""
    path = EVENTS / name
    if UPDATE:
        path.write_text(json.dumps(current, indent=2) + "\n")
    assert path.exists() and json.loads(path.read_text()) == current, (
        f"events/{name} is out of date with the contracts; review, then regenerate with RLINF_BENCH_UPDATE_EVENTS=1"
    )


@pytest.mark.parametrize("name", sorted(derived_events()))
def test_given_the_contracts_then_each_sample_is_current(name: str) -> None:
    check_sample(name, derived_events()[name])


def handler(folder: str, env: dict[str, str]) -> ModuleType:
    """functions/<folder>/app.py imported with the environment the stack gives it."""
    base = {"AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION, "POWERTOOLS_SERVICE_NAME": "rlinf-bench"}
    return load_app(REPO / "functions" / folder / "app.py", f"events_{folder}_{id(env)}", {**base, **env})


def invoke(app: ModuleType, name: str, doc: dict[str, Any]) -> Any:
    return app.lambda_handler(doc, LocalLambdaContext(function_name=name))


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(key, value)
    with mock_aws():
        yield


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Iterator[tuple[FakeApiServer, Path]]:
    with FakeApiServer() as fake:
        path = tmp_path / "kubeconfig"
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "fake", "cluster": {"server": fake.url}}],
                    "users": [{"name": "submitter", "user": {"token": "test-token"}}],
                    "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "submitter"}}],
                    "current-context": "fake",
                }
            )
        )
        yield fake, path


def test_given_the_planner_event_then_it_plans_one_item_per_run_and_probe() -> None:
    doc = event("request_planner.json")
    app = handler("request_planner", {"RESULTS_PREFIX": RESULTS, "NAMESPACE": "rlinf-eval"})
    planned = invoke(app, "RequestPlannerFunction", doc)
    runs = doc["request"]["runs"] * len(doc["request"]["suites"])
    assert len(planned["eval_items"]) == runs
    assert len(planned["probe_items"]) == len(doc["request"]["probes"])
    assert all(item["result_uri"].startswith(RESULTS) for item in planned["eval_items"])


def test_given_the_submitter_event_then_its_job_reaches_the_cluster_with_token_and_image_digest(
    kubeconfig: tuple[FakeApiServer, Path],
) -> None:
    fake, path = kubeconfig
    doc = event("job_submitter.json")
    app = handler("job_submitter", {"COMPUTE": f"kubeconfig:{path}", "NAMESPACE": "rlinf-eval"})
    result = invoke(app, "JobSubmitterFunction", doc)
    assert result["created"] is True
    job = fake.cluster.objects["jobs"][("rlinf-eval", result["job_name"])]
    env = {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert "EXAMPLE-TASK-TOKEN" in env.values()
    assert env["IMAGE_DIGEST"] == doc["item"]["image"].split("@")[1]


def test_given_a_wrong_cluster_name_then_the_first_submit_fails_naming_it(aws: None) -> None:
    app = handler("job_submitter", {"COMPUTE": f"eks:no-such-cluster@{REGION}", "NAMESPACE": "rlinf-eval"})
    with pytest.raises(Exception, match="no-such-cluster"):
        invoke(app, "JobSubmitterFunction", event("job_submitter.json"))


def test_given_the_failure_events_then_the_notice_goes_out_and_the_silent_job_is_explained(
    aws: None, kubeconfig: tuple[FakeApiServer, Path]
) -> None:
    fake, path = kubeconfig
    sns, sqs = boto3.client("sns"), boto3.client("sqs")
    topic = sns.create_topic(Name="rlinf-bench-results")["TopicArn"]
    inbox = sqs.create_queue(QueueName="inbox")["QueueUrl"]
    inbox_arn = sqs.get_queue_attributes(QueueUrl=inbox, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=inbox_arn)
    env = {"RESULTS_TOPIC_ARN": topic, "COMPUTE": f"kubeconfig:{path}", "NAMESPACE": "rlinf-eval"}
    app = handler("failure_notifier", env)

    notice = invoke(app, "FailureNotifierFunction", event("failure_notifier-notify.json"))
    [message] = sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10)["Messages"]
    assert "libero_11" in json.loads(message["Body"])["Message"]
    assert notice["message_id"]

    explain = event("failure_notifier-explain_run.json")
    job = explain["item"]["job_name"]
    submitter = handler("job_submitter", {"COMPUTE": f"kubeconfig:{path}", "NAMESPACE": "rlinf-eval"})
    assert invoke(submitter, "JobSubmitterFunction", event("job_submitter.json"))["job_name"] == job
    oom = {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}
    killed = {"name": "eval", "image": "x", "imageID": "", "ready": False, "restartCount": 0, "state": oom}
    fake.cluster.add_pod("rlinf-eval", job, f"{job}-abcde", {"phase": "Failed", "containerStatuses": [killed]})
    outcome = invoke(app, "FailureNotifierFunction", explain)
    assert outcome["status"] == "failed"
    assert outcome["job_reason"] == "OOMKilled"


class _Webhook(BaseHTTPRequestHandler):
    received: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append(json.loads(body))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    received: list[dict[str, Any]] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("W", (_Webhook,), {"received": received}))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}/services/T000/B000/XXXX", received
    finally:
        server.shutdown()
        server.server_close()


def test_given_the_stacks_blank_secret_then_slack_is_skipped_and_the_notifier_succeeds(
    aws: None, caplog: pytest.LogCaptureFixture
) -> None:
    # What the stack creates when SlackWebhookSecretArn is empty (template.yaml SlackWebhookSecret).
    found = re.search(r'SlackWebhookSecret:.*?SecretString: "(.*?)"', (REPO / "template.yaml").read_text(), re.S)
    assert found
    blank = found.group(1)
    arn = boto3.client("secretsmanager").create_secret(Name="slack", SecretString=blank)["ARN"]
    app = handler("slack_notifier", {"SLACK_WEBHOOK_SECRET_ARN": arn})
    with caplog.at_level(logging.WARNING):
        result = invoke(app, "SlackNotifierFunction", event("slack_notifier.json"))
    assert result == {"posted": 0, "records": 1}
    assert "Slack not configured" in caplog.text


def test_given_a_webhook_in_the_secret_then_the_block_kit_payload_is_posted(
    aws: None, webhook: tuple[str, list[dict[str, Any]]]
) -> None:
    url, received = webhook
    arn = boto3.client("secretsmanager").create_secret(Name="slack", SecretString=url)["ARN"]
    app = handler("slack_notifier", {"SLACK_WEBHOOK_SECRET_ARN": arn})
    assert invoke(app, "SlackNotifierFunction", event("slack_notifier.json")) == {"posted": 1, "records": 1}
    sent = json.loads(event("slack_notifier.json")["Records"][0]["Sns"]["Message"])["slack"]
    assert received == [sent]


def test_given_the_aggregator_and_publisher_events_then_a_report_is_stored_and_announced(
    aws: None, tmp_path: Path
) -> None:
    doc = event("results_aggregator.json")
    request_id = doc["request"]["request_id"]
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    for outcome in doc["outcomes"][0]:  # what each eval Job would have written
        run = make_run(
            {0: [True, True], 1: [True, False]},
            suite=outcome["suite"],
            run_index=outcome["run_index"],
            ckpt=AggregateInput.model_validate(doc).request.checkpoint,
        ).model_copy(update={"request_id": request_id})
        key = outcome["result_uri"].removeprefix(f"s3://{BUCKET}/")
        s3.put_object(Bucket=BUCKET, Key=key, Body=run.to_json().encode())
    sns, sqs = boto3.client("sns"), boto3.client("sqs")
    topic = sns.create_topic(Name="rlinf-bench-results")["TopicArn"]
    inbox = sqs.create_queue(QueueName="inbox")["QueueUrl"]
    inbox_arn = sqs.get_queue_attributes(QueueUrl=inbox, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=inbox_arn)
    mlflow_uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {"RESULTS_PREFIX": RESULTS, "MLFLOW_TRACKING_URI": mlflow_uri, "RESULTS_TOPIC_ARN": topic}

    aggregated = invoke(handler("results_aggregator", env), "ResultsAggregatorFunction", doc)
    check_sample("results_publisher.json", aggregated)  # the publisher's sample is the aggregator's answer
    assert s3.head_object(Bucket=BUCKET, Key=aggregated["report_uri"].removeprefix(f"s3://{BUCKET}/"))
    assert any("ImagePullBackOff" in failed for failed in aggregated["failed_runs"])

    published = invoke(handler("results_publisher", env), "ResultsPublisherFunction", event("results_publisher.json"))
    assert published["mlflow_error"] == ""
    assert published["mlflow_run_id"]
    [message] = sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10)["Messages"]
    assert "ImagePullBackOff" in json.loads(message["Body"])["Message"]


def test_given_a_secret_that_does_not_exist_then_slack_is_skipped_and_the_notifier_succeeds(
    aws: None, caplog: pytest.LogCaptureFixture
) -> None:
    missing = f"arn:aws:secretsmanager:{REGION}:123456789012:secret:deleted-AbCdEf"
    app = handler("slack_notifier", {"SLACK_WEBHOOK_SECRET_ARN": missing})
    with caplog.at_level(logging.WARNING):
        assert invoke(app, "SlackNotifierFunction", event("slack_notifier.json")) == {"posted": 0, "records": 1}
    assert "Slack not configured" in caplog.text
