"""The evaluation state machine in moto: the real ASL, the real handlers (in-process), fake Jobs that call back.

moto's Step Functions engine executes statemachine/evaluate_checkpoint.asl.json; each Lambda task runs
the handler from functions/<name>/app.py in this process (rlinf_local.lambdas). Jobs are :class:`FakeJobs`:
on submit they write a RunResult/ProbeResult to moto's S3 and call back through the Step Functions API
with the task token, the way eval_runner and infra_probes do, or misbehave as a scenario asks.
"""

from __future__ import annotations

import io
import json
import re
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from rlinf_aws.task_callback import TOKEN_ENV
from rlinf_bench.contracts import ProbeResult, ProbeVerdict, RunResult
from rlinf_bench.contracts.workflow import JobCallback
from rlinf_bench.errors import ClusterUnreachableError, JobNotFoundError
from rlinf_k8s.jobs import JobBundle
from rlinf_k8s.submitter import FailureReason, JobState, JobStatus, SubmitResult
from rlinf_local.execution_history import history as execution_history
from rlinf_local.lambdas import InProcessLambdas, load_app
from rlinf_local.stack import function_folders

ROOT = Path(__file__).resolve().parents[3]
ASL = ROOT / "statemachine" / "evaluate_checkpoint.asl.json"
REGION = "us-east-1"
ACCOUNT = "123456789012"
BUCKET = "rlinf-ckpts"
# The functions the state machine calls (its ${...FunctionArn} substitutions), from template.yaml's list.
_CALLED = set(re.findall(r"\$\{(\w+FunctionArn)\}", ASL.read_text()))
FUNCTIONS = {
    f"{logical}Arn": (f"rlinf-{folder.replace('_', '-')}", folder)
    for logical, folder in function_folders().items()
    if f"{logical}Arn" in _CALLED
}
SLACK_FUNCTION = ("rlinf-slack-notifier", "slack_notifier")

# What a fake Job does: write its result and succeed, report a failure, or fall silent.
Behaviour = Callable[[JobBundle], str]
SUCCEED, FAIL, SILENT, UNREACHABLE = "succeed", "fail", "silent", "unreachable"


def _env_of(bundle: JobBundle) -> dict[str, str]:
    container = bundle.job.spec.template.spec.containers[0]
    return {e.name: e.value for e in container.env or []}


def _arg_after(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1] if flag in command else ""


@dataclass
class FakeJobs:
    """A Submitter whose Jobs run in threads and call back through moto's Step Functions API."""

    make_result: Callable[[JobBundle], RunResult | ProbeResult]
    behaviour: Behaviour = lambda bundle: SUCCEED
    reason_for_silence: FailureReason = FailureReason.OOM_KILLED
    duration_s: float = 0.2
    submitted: list[str] = field(default_factory=list)
    statuses: dict[str, JobStatus] = field(default_factory=dict)
    cancelled: list[str] = field(default_factory=list)
    threads: list[threading.Thread] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # why a Job thread died (its execution then waits forever)

    def submit(self, bundle: JobBundle) -> SubmitResult:
        if self.behaviour(bundle) == UNREACHABLE:
            raise ClusterUnreachableError(
                f"create Job {bundle.name}: the Kubernetes API at https://eks.example did not answer after 4 attempts"
            )
        created = bundle.name not in self.submitted
        if created:
            self.submitted.append(bundle.name)
            t = threading.Thread(target=self._run, args=(bundle,), daemon=True)
            self.threads.append(t)
            t.start()
        return SubmitResult(name=bundle.name, namespace=bundle.namespace, created=created)

    def _run(self, bundle: JobBundle) -> None:
        try:
            self._complete(bundle)
        except Exception as exc:
            self.errors.append(f"{bundle.name}: {type(exc).__name__}: {exc}")
            raise

    def _complete(self, bundle: JobBundle) -> None:
        env = _env_of(bundle)
        token = env[TOKEN_ENV]
        command = list(bundle.job.spec.template.spec.containers[0].command or [])
        sfn = boto3.client("stepfunctions", region_name=REGION)
        what = self.behaviour(bundle)
        time.sleep(self.duration_s)
        if what == SILENT:
            self.statuses[bundle.name] = JobStatus(
                name=bundle.name,
                namespace=bundle.namespace,
                state=JobState.FAILED,
                reason=self.reason_for_silence.value,
                message="pod rlinf container eval exited with code 137",
            )
            return
        if what == FAIL:
            self.statuses[bundle.name] = JobStatus(name=bundle.name, namespace=bundle.namespace, state=JobState.FAILED)
            sfn.send_task_failure(taskToken=token, error="RunFailed", cause="simulator exploded on task 3")
            return
        result = self.make_result(bundle)
        out = _arg_after(command, "--out")
        loc = out.removeprefix("s3://").split("/", 1)
        boto3.client("s3", region_name=REGION).put_object(Bucket=loc[0], Key=loc[1], Body=result.to_json())
        self.statuses[bundle.name] = JobStatus(name=bundle.name, namespace=bundle.namespace, state=JobState.SUCCEEDED)
        if isinstance(result, RunResult):
            cb = JobCallback(
                kind="eval",
                job_name=bundle.name,
                result_uri=out,
                headline=f"SR {result.success_rate:.2f}",
                suite=result.suite,
                run_index=result.run_index,
            )
        else:
            cb = JobCallback(kind="probe", job_name=bundle.name, result_uri=out, probe=result.probe)
        sfn.send_task_success(taskToken=token, output=cb.model_dump_json())

    def status(self, name: str, namespace: str) -> JobStatus:
        if name not in self.statuses:
            if name in self.submitted:
                return JobStatus(name=name, namespace=namespace, state=JobState.RUNNING)
            raise JobNotFoundError(f"no Job {namespace}/{name}")
        return self.statuses[name]

    def logs(self, name: str, namespace: str, *, tail_lines: int = 100) -> str:
        return ""

    def cancel(self, name: str, namespace: str) -> bool:
        self.cancelled.append(name)
        return True


def probe_result(bundle: JobBundle) -> ProbeResult:
    command = list(bundle.job.spec.template.spec.containers[0].command or [])
    name = command[command.index("infra_probes") + 1]
    return ProbeResult(probe=name, verdict=ProbeVerdict.NOT_AVAILABLE, reason="no GPU on this test machine")


def _dummy_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("app.py", "def lambda_handler(event, context):\n    return event\n")
    return buf.getvalue()


@dataclass
class WorkflowStack:
    """The workflow's resources in moto, with the real handlers dispatched in-process."""

    jobs: FakeJobs
    mlflow_uri: str = ""
    slack_url: str = ""
    lambdas: InProcessLambdas = field(default_factory=InProcessLambdas)
    state_machine_arn: str = ""
    topic_arn: str = ""
    email_queue_url: str = ""
    slack_dlq_url: str = ""
    modules: dict[str, Any] = field(default_factory=dict)

    def deploy(self) -> WorkflowStack:
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        sns = boto3.client("sns", region_name=REGION)
        sqs = boto3.client("sqs", region_name=REGION)
        self.topic_arn = sns.create_topic(Name="rlinf-results")["TopicArn"]
        self.email_queue_url = sqs.create_queue(QueueName="email-outbox")["QueueUrl"]
        email_arn = sqs.get_queue_attributes(QueueUrl=self.email_queue_url, AttributeNames=["QueueArn"])
        sns.subscribe(TopicArn=self.topic_arn, Protocol="sqs", Endpoint=email_arn["Attributes"]["QueueArn"])
        self.slack_dlq_url = sqs.create_queue(QueueName="slack-dlq")["QueueUrl"]
        secrets = boto3.client("secretsmanager", region_name=REGION)
        # An empty secret is how a stack without Slack looks: the notifier must say "not configured".
        secret_arn = secrets.create_secret(Name="rlinf/slack", SecretString=self.slack_url or " ")["ARN"]
        env = {
            "RESULTS_PREFIX": f"s3://{BUCKET}/results",
            "COMPUTE": "local:unused",
            "EVAL_IMAGE": "registry.example/rlinf-eval@sha256:" + "a" * 64,
            "PROBE_IMAGE": "registry.example/rlinf-probe@sha256:" + "b" * 64,
            "NAMESPACE": "rlinf-eval",
            "MLFLOW_TRACKING_URI": self.mlflow_uri,
            "RESULTS_TOPIC_ARN": self.topic_arn,
            "SLACK_WEBHOOK_SECRET_ARN": secret_arn,
            "AWS_REGION": REGION,
            "POWERTOOLS_SERVICE_NAME": "rlinf-bench-test",
        }
        lam = boto3.client("lambda", region_name=REGION)
        iam = boto3.client("iam", region_name=REGION)
        role = iam.create_role(RoleName="lambda", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        arns: dict[str, str] = {}
        for key, (name, folder) in [*FUNCTIONS.items(), ("slack", SLACK_FUNCTION)]:
            fn = lam.create_function(
                FunctionName=name,
                Runtime="python3.12",
                Role=role,
                Handler="app.lambda_handler",
                Code={"ZipFile": _dummy_zip()},
            )
            arns[key] = fn["FunctionArn"]
            module = load_app(ROOT / "functions" / folder / "app.py", f"_lambda_{folder}", env)
            if hasattr(module, "CLIENTS"):
                module.CLIENTS.submitter_factory = lambda: self.jobs
            self.modules[folder] = module
            dlq = self.slack_dlq_url if folder == "slack_notifier" else ""
            self.lambdas.register(name, module.lambda_handler, dead_letter_queue_url=dlq)
        self.lambdas.sqs_factory = lambda: boto3.client("sqs", region_name=REGION)
        sns.subscribe(TopicArn=self.topic_arn, Protocol="lambda", Endpoint=arns["slack"])
        definition = ASL.read_text()
        for key in FUNCTIONS:
            definition = definition.replace("${" + key + "}", arns[key])
        sfn = boto3.client("stepfunctions", region_name=REGION)
        self.state_machine_arn = sfn.create_state_machine(
            name="evaluate-checkpoint", definition=definition, roleArn=role
        )["stateMachineArn"]
        return self

    def run(self, request_json: str, name: str, *, timeout_s: float = 120.0) -> dict[str, Any]:
        """Start an execution and wait (bounded) for it to end; returns describe_execution."""
        sfn = boto3.client("stepfunctions", region_name=REGION)
        arn = sfn.start_execution(stateMachineArn=self.state_machine_arn, name=name, input=request_json)["executionArn"]
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            desc = sfn.describe_execution(executionArn=arn)
            if desc["status"] != "RUNNING":
                return desc
            time.sleep(0.2)
        last = [(e["type"], e.get("stateEnteredEventDetails", {}).get("name")) for e in self.history(arn)[-8:]]
        raise AssertionError(
            f"execution {name} still running after {timeout_s} s; its last events: {last}; "
            f"Job threads that died: {self.jobs.errors}"
        )

    def history(self, execution_arn: str) -> list[dict[str, Any]]:
        return execution_history(boto3.client("stepfunctions", region_name=REGION), execution_arn)

    def emails(self) -> list[str]:
        sqs = boto3.client("sqs", region_name=REGION)
        out = []
        while True:
            msgs = sqs.receive_message(QueueUrl=self.email_queue_url, MaxNumberOfMessages=10).get("Messages", [])
            if not msgs:
                return out
            for m in msgs:
                body = json.loads(m["Body"])
                out.append(body.get("Message", m["Body"]))
                sqs.delete_message(QueueUrl=self.email_queue_url, ReceiptHandle=m["ReceiptHandle"])
