"""Deploy template.yaml into moto: samtranslator's CloudFormation, adapted where moto falls short.

The stack is made from the same template ``sam deploy`` submits (template.yaml transformed offline by
deploy/tools/sam_transform.py, which runs in .venv-tools because aws-sam-translator pins an older
pydantic). moto's CloudFormation then creates it. Where moto cannot do what AWS does, the template or
the created stack is adapted, and every adaptation is recorded (:class:`Adaptation`) so the command
prints it and docs/embedded.md lists it (REFERENCE.md section 4 has the facts behind each one).
"""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rlinf_bench.errors import ConfigError
from rlinf_local.transform_cache import cached_transform, transform_digest

__all__ = [
    "Adaptation",
    "LocalStack",
    "StackParameters",
    "adapt_template",
    "deploy_stack",
    "function_folders",
    "read_template",
    "transformed_template",
]

REPO = Path(__file__).resolve().parents[1]
TRANSFORM_SCRIPT = REPO / "deploy" / "tools" / "sam_transform.py"
TOOLS_PYTHON = REPO / ".venv-tools" / "bin" / "python"
STACK_NAME = "rlinf-bench-local"
ClientFactory = Callable[[str], Any]

#: Resource types moto's CloudFormation cannot create (or would create wrongly), and what stands in for them.
DROPPED_TYPES: dict[str, str] = {
    "AWS::EKS::AccessEntry": "no EKS here: Jobs run as local subprocesses (LocalExecutor), so no cluster access",
    "AWS::Scheduler::Schedule": "moto's CloudFormation has no EventBridge Scheduler; the queue sentinel it runs sweeps "
    "Kueue Jobs, and the local executor's Jobs never queue",
    "AWS::EKS::PodIdentityAssociation": "no EKS here: Jobs get dummy credentials for the local moto server",
    "AWS::Lambda::EventSourceMapping": "moto's SQS -> Lambda mapping never runs a handler without Docker; "
    "an SQS poller (rlinf_local.sqs_poller) feeds the router instead",
    "AWS::SQS::QueuePolicy": "moto skips queue policies (and enforces none)",
    "AWS::SNS::Subscription": "moto's CloudFormation skips SNS subscriptions; they are created by API after the stack",
    "AWS::S3::BucketPolicy": "moto's CloudFormation does not support it (the TLS-only rule; the local server is plain HTTP on loopback)",
    "AWS::Lambda::EventInvokeConfig": "async retries are not simulated: a failing Slack post goes to the DLQ at once, "
    "and watch tells the router again about an end event it failed on",
}


@dataclass(frozen=True)
class Adaptation:
    """One difference between the deployed template and what AWS would run, and why."""

    what: str
    why: str

    def line(self) -> str:
        return f"{self.what}: {self.why}"


@dataclass(frozen=True)
class StackParameters:
    """The template's parameters for a local stack (placeholders where the value only matters on AWS)."""

    mlflow_tracking_uri: str = "http://127.0.0.1:5000"
    intake_config: str = ""
    quiet_period_s: float = 0.0
    slack_secret_arn: str = ""
    bucket: str = "rlinf-checkpoints"

    def cloudformation(self) -> list[dict[str, str]]:
        values = {
            "ClusterName": "local",
            "EvalImage": "local/rlinf-eval@sha256:" + "0" * 64,
            "ProbeImage": "local/rlinf-probe@sha256:" + "0" * 64,
            "MlflowTrackingUri": self.mlflow_tracking_uri,
            "IntakeConfig": self.intake_config,
            "QuietPeriodSeconds": str(int(self.quiet_period_s)),
            "SlackWebhookSecretArn": self.slack_secret_arn,
            "CheckpointBucketName": self.bucket,
        }
        return [{"ParameterKey": k, "ParameterValue": v} for k, v in values.items()]


@dataclass
class LocalStack:
    """What the deployed stack holds that the embedded default drives."""

    bucket: str
    intake_queue_url: str
    intake_dlq_url: str
    state_machine_arn: str
    topic_arn: str
    slack_dlq_url: str
    slack_secret_arn: str
    #: logical id -> (function name, environment variables as deployed)
    functions: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    adaptations: list[Adaptation] = field(default_factory=list)


def transformed_template(
    template: Path = REPO / "template.yaml", *, python: Path | None = None, cache_dir: Path | None = None
) -> dict[str, Any]:
    """template.yaml as samtranslator expands it (the CloudFormation `sam deploy` submits), reused from the cache
    folder while nothing it reads has changed (:mod:`rlinf_local.transform_cache`)."""
    exe = python or Path(os.environ.get("RLINF_BENCH_SAM_PYTHON", str(TOOLS_PYTHON)))
    if not exe.exists():
        raise ConfigError(
            f"aws-sam-translator is not installed ({exe} is missing); run `make setup-tools` "
            "(or set RLINF_BENCH_SAM_PYTHON to a python that has it)"
        )
    region = os.environ.get("AWS_DEFAULT_REGION", "us-east-1")

    def transform() -> dict[str, Any]:
        proc = subprocess.run(
            [str(exe), str(TRANSFORM_SCRIPT), str(template)],
            capture_output=True,
            text=True,
            env={**os.environ, "AWS_DEFAULT_REGION": region},
            check=False,
        )
        if proc.returncode != 0:
            raise ConfigError(f"samtranslator could not transform {template}: {proc.stderr.strip()[-1500:]}")
        doc: dict[str, Any] = json.loads(proc.stdout)
        return doc

    return cached_transform(transform_digest(template, TRANSFORM_SCRIPT, exe, region), transform, cache_dir)


class _TemplateLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short tags read as ``{tag: value}`` (``!Ref X`` -> ``{"Ref": "X"}``)."""


def _tagged(loader: yaml.SafeLoader, tag: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return {tag: loader.construct_scalar(node)}
    if isinstance(node, yaml.SequenceNode):
        return {tag: loader.construct_sequence(node, deep=True)}
    return {tag: loader.construct_mapping(node, deep=True)}  # type: ignore[arg-type]


_TemplateLoader.add_multi_constructor("!", _tagged)


def read_template(template: Path = REPO / "template.yaml") -> dict[str, Any]:
    """template.yaml as written (not transformed), its short-form intrinsics as ``{tag: value}`` dicts."""
    doc: dict[str, Any] = yaml.load(template.read_text(), Loader=_TemplateLoader)
    return doc


def function_folders(template: Path = REPO / "template.yaml") -> dict[str, str]:
    """Logical id -> folder under functions/ of every function template.yaml deploys (its CodeUri): the one
    list of Lambda functions, which the in-process dispatch and the workflow tests read."""
    folders = {}
    for name, resource in read_template(template)["Resources"].items():
        if resource.get("Type") == "AWS::Serverless::Function":
            folders[name] = Path(str(resource["Properties"]["CodeUri"])).name
    return folders


def _joined(value: Any) -> str:
    """The text of a DefinitionString that samtranslator wrote as Fn::Join of literal lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "Fn::Join" in value:
        sep, parts = value["Fn::Join"]
        if all(isinstance(p, str) for p in parts):
            return str(sep).join(parts)
    raise ConfigError(f"the state machine's DefinitionString is not literal text: {str(value)[:200]}")


def adapt_template(template: dict[str, Any]) -> tuple[dict[str, Any], list[Adaptation]]:
    """A copy of the transformed template that moto's CloudFormation deploys, and what was changed."""
    doc = copy.deepcopy(template)
    resources: dict[str, Any] = doc["Resources"]
    changes: list[Adaptation] = []
    for name in sorted(resources):
        kind = resources[name]["Type"]
        if kind in DROPPED_TYPES:
            del resources[name]
            changes.append(Adaptation(f"dropped {name} ({kind})", DROPPED_TYPES[kind]))
    for name, res in resources.items():
        props = res.get("Properties", {})
        if res["Type"] == "AWS::StepFunctions::StateMachine":
            props["DefinitionString"] = _joined(props["DefinitionString"])
            props.pop("LoggingConfiguration", None)
            changes.append(Adaptation(f"{name}: LoggingConfiguration removed", "no CloudWatch log delivery in moto"))
    changes.append(
        Adaptation(
            "Lambda code and layer packages are placeholder zips",
            "moto never runs them: the handlers in functions/<name>/app.py run in this process (rlinf_local.lambdas)",
        )
    )
    return doc, changes


def _placeholder_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("app.py", "def lambda_handler(event, context):\n    raise RuntimeError('placeholder')\n")
    return buf.getvalue()


def _code_locations(template: dict[str, Any]) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for res in template["Resources"].values():
        props = res.get("Properties", {})
        loc = props.get("Code") or props.get("Content")
        if isinstance(loc, dict) and "S3Bucket" in loc:
            found.add((loc["S3Bucket"], loc["S3Key"]))
    return found


def _outputs(cfn: Any, stack_name: str) -> dict[str, str]:
    stack = cfn.describe_stacks(StackName=stack_name)["Stacks"][0]
    if stack["StackStatus"] != "CREATE_COMPLETE":
        raise ConfigError(f"the local stack ended {stack['StackStatus']}: {stack.get('StackStatusReason', '')}")
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


def _executable_state_machine(client: ClientFactory, cfn: Any, template: dict[str, Any], arn: str) -> None:
    """Create the state machine in moto's executing engine under the name CloudFormation gave it."""
    physical = {
        r["LogicalResourceId"]: r["PhysicalResourceId"]
        for r in cfn.list_stack_resources(StackName=STACK_NAME)["StackResourceSummaries"]
    }
    lam, iam = client("lambda"), client("iam")
    for logical, res in template["Resources"].items():
        if res["Type"] != "AWS::StepFunctions::StateMachine":
            continue
        props = res["Properties"]
        text = _joined(props.get("DefinitionString", ""))
        for var, ref in props.get("DefinitionSubstitutions", {}).items():
            target = ref["Fn::GetAtt"][0] if isinstance(ref, dict) and "Fn::GetAtt" in ref else None
            if target is None:
                raise ConfigError(f"{logical}: substitution {var} is not a GetAtt of a function: {ref}")
            fn_arn = lam.get_function_configuration(FunctionName=physical[target])["FunctionArn"]
            text = text.replace("${" + var + "}", fn_arn)
        role_ref = props["RoleArn"]["Fn::GetAtt"][0]
        role_arn = iam.get_role(RoleName=physical[role_ref])["Role"]["Arn"]
        client("stepfunctions").create_state_machine(name=arn.rsplit(":", 1)[-1], definition=text, roleArn=role_arn)


def deploy_stack(client: ClientFactory, params: StackParameters, template: dict[str, Any]) -> LocalStack:
    """Create the adapted stack in the account ``client`` reaches, then apply what moto's CloudFormation skips."""
    adapted, changes = adapt_template(template)
    s3 = client("s3")
    for bucket, key in sorted(_code_locations(adapted)):
        if bucket not in {b["Name"] for b in s3.list_buckets().get("Buckets", [])}:
            s3.create_bucket(Bucket=bucket)
        s3.put_object(Bucket=bucket, Key=key, Body=_placeholder_zip())
    cfn = client("cloudformation")
    cfn.create_stack(
        StackName=STACK_NAME,
        TemplateBody=json.dumps(adapted),
        Parameters=params.cloudformation(),
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
    )
    out = _outputs(cfn, STACK_NAME)
    bucket = out["CheckpointBucketName"]
    # moto drops the bucket's EventBridgeConfiguration when CloudFormation creates it.
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={"EventBridgeConfiguration": {}})
    changes.append(
        Adaptation(
            f"bucket {bucket}: EventBridge notifications enabled by API",
            "moto's CloudFormation drops NotificationConfiguration.EventBridgeConfiguration",
        )
    )
    _executable_state_machine(client, cfn, template, out["EvaluationStateMachineArn"])
    changes.append(
        Adaptation(
            "EvaluationStateMachine created again by API, DefinitionSubstitutions applied (same name and ARN)",
            "moto's CloudFormation puts state machines in a backend that does not execute them, "
            "and it does not apply DefinitionSubstitutions",
        )
    )
    stack = LocalStack(
        bucket=bucket,
        intake_queue_url=out["IntakeQueueUrl"],
        intake_dlq_url=out["IntakeDeadLetterQueueUrl"],
        state_machine_arn=out["EvaluationStateMachineArn"],
        topic_arn=out["ResultsTopicArn"],
        slack_dlq_url=out["SlackNotifierDeadLetterQueueUrl"],
        slack_secret_arn=out["SlackWebhookSecretArn"],
        adaptations=changes,
    )
    lam = client("lambda")
    for res in cfn.list_stack_resources(StackName=STACK_NAME)["StackResourceSummaries"]:
        if res.get("ResourceType") == "AWS::Lambda::Function":
            conf = lam.get_function_configuration(FunctionName=res["PhysicalResourceId"])
            env = {k: str(v) for k, v in conf.get("Environment", {}).get("Variables", {}).items()}
            stack.functions[res["LogicalResourceId"]] = (conf["FunctionName"], env)
    return stack
