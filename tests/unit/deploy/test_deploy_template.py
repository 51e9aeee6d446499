"""template.yaml deploys the whole product: parameters, wiring, retention, outputs and the SAM build recipe."""

from __future__ import annotations

import argparse
import json
import re
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.router_lambda import RouterSettings

REPO = Path(__file__).resolve().parents[3]

REQUIRED = {"ClusterName", "EvalImage", "ProbeImage", "MlflowTrackingUri"}
DIGEST = "123456789012.dkr.ecr.us-east-1.amazonaws.com/rlinf-eval@sha256:" + "a" * 64
WORKFLOW_FUNCTIONS = {
    "RequestPlannerFunction",
    "JobSubmitterFunction",
    "ResultsAggregatorFunction",
    "ResultsPublisherFunction",
    "FailureNotifierFunction",
    "SlackNotifierFunction",
    "QueueSentinelFunction",
}


def functions(template: dict[str, Any]) -> dict[str, Any]:
    return {n: r for n, r in template["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}


def matches(pattern: str, value: str) -> bool:
    return re.fullmatch(pattern, value) is not None


def test_given_a_deploy_without_a_required_parameter_then_cloudformation_refuses_it(
    template: dict[str, Any],
) -> None:
    params = template["Parameters"]
    # No Default: CloudFormation rejects the stack at `sam deploy` ("Parameters: [...] must have values").
    assert {name for name, p in params.items() if "Default" not in p} == REQUIRED
    assert "StateMachineArn" not in params  # the router starts the stack's own state machine


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        ("EvalImage", DIGEST, "123456789012.dkr.ecr.us-east-1.amazonaws.com/rlinf-eval:0.1.0"),
        ("ProbeImage", DIGEST.replace("eval", "probe"), DIGEST[:-1]),
        ("ClusterName", "gpu-training-1", "my cluster"),
        ("MlflowTrackingUri", "https://mlflow.example.com", "mlflow.example.com"),
        ("NotificationEmail", "", "not-an-address"),
        ("SlackWebhookSecretArn", "arn:aws:secretsmanager:us-east-1:123456789012:secret:slack-AbCdEf", "https://hooks"),
    ],
)
def test_given_a_malformed_parameter_then_its_pattern_refuses_it(
    template: dict[str, Any], name: str, good: str, bad: str
) -> None:
    pattern = template["Parameters"][name]["AllowedPattern"]
    assert matches(pattern, good)
    assert not matches(pattern, bad)


def test_given_the_router_then_it_starts_the_stacks_state_machine_with_bounded_concurrency(
    template: dict[str, Any],
) -> None:
    router = template["Resources"]["CheckpointRouterFunction"]["Properties"]
    assert router["Environment"]["Variables"]["STATE_MACHINE_ARN"] == {"Ref": "EvaluationStateMachine"}
    event = router["Events"]["IntakeQueue"]["Properties"]
    assert event["ScalingConfig"]["MaximumConcurrency"] >= 2  # Lambda's minimum


def test_given_what_must_outlive_the_stack_then_it_is_retained(template: dict[str, Any]) -> None:
    for name in ("IntakeDeadLetterQueue", "SlackNotifierDeadLetterQueue", "IdempotencyTable"):
        resource = template["Resources"][name]
        assert (resource["DeletionPolicy"], resource["UpdateReplacePolicy"]) == ("Retain", "Retain"), name


def test_given_the_state_machine_then_it_logs_errors_and_gets_every_function_arn(template: dict[str, Any]) -> None:
    machine = template["Resources"]["EvaluationStateMachine"]["Properties"]
    assert machine["Logging"]["Level"] == "ERROR"
    asl_path = REPO / machine["DefinitionUri"]
    placeholders = set(re.findall(r"\$\{(\w+)\}", asl_path.read_text()))
    substitutions = machine["DefinitionSubstitutions"]
    assert set(substitutions) == placeholders
    for key, value in substitutions.items():
        assert value == {"GetAtt": f"{key.removesuffix('Arn')}.Arn"}
        assert key.removesuffix("Arn") in template["Resources"]


def test_given_the_outputs_then_the_cli_hint_and_the_docs_find_them(template: dict[str, Any]) -> None:
    outputs = template["Outputs"]
    assert outputs["EvaluationStateMachineArn"]["Value"] == {"Ref": "EvaluationStateMachine"}
    for name in (
        "CheckpointBucketName",
        "ResultsTopicArn",
        "IntakeQueueUrl",
        "IntakeDeadLetterQueueUrl",
        "SlackNotifierDeadLetterQueueUrl",
        "SlackWebhookSecretArn",
    ):
        assert name in outputs


def test_given_no_state_machine_then_the_cli_names_the_stack_output_and_how_to_read_it(
    template: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:

    from rlinf_bench.errors import ConfigError
    from rlinf_cli.intake_common import STATE_MACHINE_ENV, state_machine_arn

    for name in STATE_MACHINE_ENV:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError) as err:
        state_machine_arn(argparse.Namespace(state_machine_arn="", dry_run=False))
    stack = tomllib.loads((REPO / "samconfig.toml").read_text())["default"]["global"]["parameters"]["stack_name"]
    named = re.findall(r"OutputKey=='(\w+)'", str(err.value))
    assert named == ["EvaluationStateMachineArn"]
    assert set(named) <= set(template["Outputs"])
    assert f"--stack-name {stack} " in str(err.value)


def test_given_results_then_they_live_under_the_buckets_results_prefix_and_expire(template: dict[str, Any]) -> None:
    rules = template["Resources"]["CheckpointBucket"]["Properties"]["LifecycleConfiguration"]["Rules"]
    expiring = [r for r in rules if r.get("Prefix") == "results/"]
    assert expiring
    assert expiring[0]["ExpirationInDays"] == {"Ref": "ResultsRetentionDays"}
    for name, fn in functions(template).items():
        value = fn["Properties"].get("Environment", {}).get("Variables", {}).get("RESULTS_PREFIX")
        assert value in (None, {"Sub": "s3://${CheckpointBucket}/results"}), name


def test_given_the_slack_webhook_then_it_is_read_from_secrets_manager_never_from_the_environment(
    template: dict[str, Any],
) -> None:
    env = template["Resources"]["SlackNotifierFunction"]["Properties"]["Environment"]["Variables"]
    assert set(env) == {"SLACK_WEBHOOK_SECRET_ARN"}
    assert template["Resources"]["SlackWebhookSecret"]["Condition"] == "CreateSlackSecret"
    assert template["Resources"]["SlackWebhookSecret"]["Properties"]["SecretString"].strip() == ""
    slack = template["Resources"]["SlackNotifierFunction"]["Properties"]
    assert slack["DeadLetterQueue"]["TargetArn"] == {"GetAtt": "SlackNotifierDeadLetterQueue.Arn"}
    assert slack["Events"]["Results"]["Properties"]["Topic"] == {"Ref": "ResultsTopic"}
    assert template["Resources"]["EmailSubscription"]["Condition"] == "HasEmail"


class _Recording(Mapping[str, str]):
    """An environment that remembers which variables the code asked for."""

    def __init__(self) -> None:
        self.asked: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.add(key)
        return default

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def test_given_the_workflow_functions_then_every_variable_the_template_sets_is_one_the_code_reads(
    template: dict[str, Any],
) -> None:
    env = _Recording()
    PipelineSettings.from_env(env)
    powertools = {"POWERTOOLS_SERVICE_NAME", "POWERTOOLS_LOG_LEVEL", "MPLCONFIGDIR"}
    for name in WORKFLOW_FUNCTIONS:
        variables = set(template["Resources"][name]["Properties"]["Environment"]["Variables"])
        assert variables - env.asked - powertools == set(), name


def test_given_the_router_then_its_environment_is_what_router_settings_reads(template: dict[str, Any]) -> None:
    variables = template["Resources"]["CheckpointRouterFunction"]["Properties"]["Environment"]["Variables"]
    values = {name: "1" for name in variables}
    values["STATE_MACHINE_ARN"] = "arn:aws:states:us-east-1:123456789012:stateMachine:evaluate"
    RouterSettings.from_env(values)  # raises naming any variable it needs and the template lacks


def test_given_every_function_and_the_layer_then_sam_builds_them_with_a_makefile_target(
    template: dict[str, Any],
) -> None:
    makefile = (REPO / "Makefile").read_text()
    built = {n: r for n, r in template["Resources"].items() if "BuildMethod" in r.get("Metadata", {})}
    assert set(functions(template)) | {"SharedLayer"} == set(built)
    for resource in built.values():
        assert resource["Metadata"]["BuildMethod"] == "makefile"
        assert resource["Metadata"]["ContextPath"] == "."  # the Makefile at the repo root
    # The functions' build-<LogicalId> targets come from the Makefile's one FUNCTIONS list.
    listed = re.search(r"^FUNCTIONS := ((?:.*\\\n)*.*)$", makefile, re.M)
    assert listed, "Makefile has no FUNCTIONS list"
    entries = [e.split(":") for e in listed[1].replace("\\\n", " ").split()]
    groups = tomllib.loads((REPO / "pyproject.toml").read_text())["dependency-groups"]
    assert {e[0]: e[1] for e in entries} == {
        n: Path(f["Properties"]["CodeUri"]).name for n, f in functions(template).items()
    }
    assert all(e[2] in groups for e in entries), entries
    assert re.search(r"^build-SharedLayer:", makefile, re.M), "Makefile has no target build-SharedLayer"
    for name, fn in functions(template).items():
        folder = REPO / fn["Properties"]["CodeUri"]
        assert (folder / "app.py").is_file(), f"{name}: no {folder}/app.py"
        assert (folder / "requirements.txt").is_file(), f"{name}: no {folder}/requirements.txt"
    # Recipes reach repo files through ROOT: sam runs them in a scratch copy of CodeUri.
    recipes = makefile[makefile.index("build-SharedLayer:") :]
    assert not re.search(r"-r functions/|cp -r rlinf_bench", recipes)


def test_given_the_eks_wiring_then_access_entries_match_the_rbac_groups_and_the_namespace(
    template: dict[str, Any],
) -> None:
    rbac = [d for d in yaml.safe_load_all((REPO / "deploy/k8s/rbac.yaml").read_text()) if d]
    bound = {d["roleRef"]["name"]: {s["name"] for s in d["subjects"]} for d in rbac if d["kind"] == "RoleBinding"}
    resources = template["Resources"]
    assert set(resources["JobSubmitterAccessEntry"]["Properties"]["KubernetesGroups"]) == bound["rlinf-bench-submitter"]
    assert set(resources["FailureNotifierAccessEntry"]["Properties"]["KubernetesGroups"]) == bound["rlinf-bench-reader"]
    assert set(resources["QueueSentinelAccessEntry"]["Properties"]["KubernetesGroups"]) == bound["rlinf-bench-reader"]
    namespace = yaml.safe_load((REPO / "deploy/k8s/namespace.yaml").read_text())["metadata"]["name"]
    account = yaml.safe_load((REPO / "deploy/k8s/serviceaccount.yaml").read_text())["metadata"]["name"]
    assert template["Parameters"]["Namespace"]["Default"] == namespace
    assert template["Parameters"]["JobServiceAccount"]["Default"] == account


def test_given_samconfig_then_build_and_deploy_need_no_flags() -> None:

    config = tomllib.loads((REPO / "samconfig.toml").read_text())["default"]
    assert config["global"]["parameters"]["stack_name"]
    assert config["deploy"]["parameters"]["capabilities"] == "CAPABILITY_IAM"
    assert config["build"]["parameters"].get("cached", False) is False  # --cached hashes only CodeUri
    assert json.dumps(config)  # plain data


def test_given_the_local_lambda_dispatch_then_it_runs_the_folders_the_template_deploys(
    template: dict[str, Any],
) -> None:
    from rlinf_local.stack import function_folders

    deployed = {name: fn["Properties"]["CodeUri"].rstrip("/") for name, fn in functions(template).items()}
    assert deployed == {name: f"functions/{folder}" for name, folder in function_folders().items()}
    assert all((REPO / "functions" / folder / "app.py").is_file() for folder in function_folders().values())


def test_given_no_cluster_name_then_cloudformation_refuses_the_stack_before_creating_anything(
    transformed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3
    from botocore.exceptions import ClientError
    from moto import mock_aws

    for key, value in {
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    given = [{"ParameterKey": k, "ParameterValue": "x"} for k in sorted(REQUIRED - {"ClusterName"})]
    with mock_aws():
        cfn = boto3.client("cloudformation")
        with pytest.raises(ClientError, match="ClusterName"):
            cfn.create_stack(
                StackName="rlinf-bench",
                TemplateBody=json.dumps(transformed),
                Parameters=given,
                Capabilities=["CAPABILITY_IAM"],
            )
        assert cfn.list_stacks()["StackSummaries"] == []
