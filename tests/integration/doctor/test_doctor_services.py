"""Checks of what a run talks to, against real servers on loopback: MLflow (a closed port, a sqlite
store), a websocket policy server, the fake Kubernetes API (RBAC via SelfSubjectAccessReview), moto."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from rlinf_bench.doctor import CheckStatus, Target
from tests.integration.doctor.conftest import by_name, closed_port, doctor, report_of, run_cli
from tests.integration.k8s.fake_apiserver import FakeApiServer

TOKEN = "doctor-test-token"


# -- MLflow ----------------------------------------------------------------------------------------


def test_given_an_unreachable_mlflow_port_then_mlflow_reachable_fails_with_the_fix() -> None:
    uri = f"http://127.0.0.1:{closed_port()}"

    proc = run_cli("rlinf_cli.main", "doctor", "--for", "eval", "--only", "mlflow", "--tracking-uri", uri, "--json")

    assert proc.returncode == 1
    [check] = report_of(proc)["checks"]
    assert check["name"] == "mlflow.reachable" and check["status"] == "fail"
    assert uri in check["measured"] and "unreachable" in check["measured"] and "refused" in check["measured"]
    assert "MLFLOW_TRACKING_URI" in check["fix"]


def test_given_a_tracking_server_with_the_experiment_then_reachable_experiment_and_write_pass(
    mlflow_server: str,
) -> None:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(mlflow_server)
    exp = client.get_experiment_by_name("RLinf") or client.get_experiment(client.create_experiment("RLinf"))

    checks = by_name(doctor(Target.EVAL, only=["mlflow"], tracking_uri=mlflow_server))

    assert {n: c.status for n, c in checks.items()} == dict.fromkeys(checks, CheckStatus.PASS)
    assert f"{mlflow_server}/health answered 200" == checks["mlflow.reachable"].measured
    assert client.search_runs([exp.experiment_id]) == []  # the test run was deleted


def test_given_a_tracking_server_without_the_experiment_then_a_warning_says_who_creates_it(
    mlflow_server: str,
) -> None:
    checks = by_name(doctor(Target.EVAL, only=["mlflow"], tracking_uri=mlflow_server, experiment="Nope"))
    assert checks["mlflow.reachable"].status is CheckStatus.PASS
    assert checks["mlflow.experiment"].status is CheckStatus.WARN and "--publish" in checks["mlflow.experiment"].fix
    assert checks["mlflow.write"].status is CheckStatus.SKIP


def test_given_a_sqlite_store_with_the_experiment_then_a_test_run_is_written_and_deleted(tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    client = MlflowClient(uri)
    exp = client.create_experiment("RLinf", artifact_location=str(tmp_path / "artifacts"))

    checks = by_name(doctor(Target.EVAL, only=["mlflow"], tracking_uri=uri))

    assert [c.status for c in checks.values()] == [CheckStatus.PASS] * 3
    assert client.search_runs([exp]) == []  # the doctor's run is gone (deleted)


def test_given_no_tracking_uri_then_mlflow_is_skipped_with_how_to_enable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    [check] = doctor(Target.EVAL, only=["mlflow"]).checks
    assert check.status is CheckStatus.SKIP and "--tracking-uri" in check.fix


# -- policy servers --------------------------------------------------------------------------------


def test_given_a_policy_server_that_is_not_running_then_policy_server_fails_naming_the_address() -> None:
    port = closed_port()
    [check] = doctor(Target.EVAL, only=["policy"], policy_servers=[f"ws://127.0.0.1:{port}"]).checks
    assert check.status is CheckStatus.FAIL
    assert f"127.0.0.1:{port}" in check.measured and "serve-policy" in check.fix


def test_given_a_running_policy_server_then_its_protocol_and_policy_are_reported() -> None:
    from eval_runner.policies.builtin import ZeroPolicy
    from eval_runner.policies.server import PolicyServer

    with PolicyServer(ZeroPolicy(), port=0) as server:
        [check] = doctor(Target.EVAL, only=["policy"], policy_servers=[server.url]).checks
    assert check.status is CheckStatus.PASS, check.measured
    assert "rlinf-bench-policy v1" in check.measured and "ZeroPolicy" in check.measured


def test_given_a_policy_server_that_is_still_starting_then_the_check_waits_for_it() -> None:
    import threading

    from eval_runner.policies.builtin import ZeroPolicy
    from eval_runner.policies.server import PolicyServer

    port = closed_port()
    servers: list[PolicyServer] = []
    timer = threading.Timer(1.0, lambda: servers.append(PolicyServer(ZeroPolicy(), port=port).start()))
    timer.start()
    try:
        [check] = doctor(
            Target.EVAL, only=["policy"], policy_servers=[f"ws://127.0.0.1:{port}"], policy_wait_s=30
        ).checks
    finally:
        timer.join()
        for server in servers:
            server.shutdown()
    assert check.status is CheckStatus.PASS, check.measured


# -- Kubernetes ------------------------------------------------------------------------------------


@pytest.fixture
def fake() -> Iterator[FakeApiServer]:
    with FakeApiServer() as server:
        yield server


def _kubeconfig(tmp_path: Path, url: str, *, current: bool = True) -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "fake", "cluster": {"server": url}}],
        "users": [{"name": "submitter", "user": {"token": TOKEN}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "submitter"}}],
    }
    if current:
        doc["current-context"] = "fake"
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_given_rbac_that_denies_create_jobs_then_k8s_rbac_fails_with_the_role_to_apply(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    fake.cluster.denied.add(("create", "jobs"))
    fake.cluster.add_node("gpu-1", {"role": "gpu-training"}, ["nvidia.com/gpu"], gpus=8)

    checks = by_name(doctor(Target.DEPLOY, only=["k8s"], kubeconfig=str(_kubeconfig(tmp_path, fake.url))))

    assert checks["k8s.config"].status is CheckStatus.PASS
    assert checks["k8s.namespace"].status is CheckStatus.PASS
    rbac = checks["k8s.rbac"]
    assert rbac.status is CheckStatus.FAIL
    assert "may not create jobs in rlinf-eval" in rbac.measured and "deploy/k8s" in rbac.fix
    assert checks["k8s.gpu_nodes"].status is CheckStatus.PASS
    assert fake.cluster.count("POST", "selfsubjectaccessreviews") >= 1


def test_given_full_rbac_and_tainted_gpu_nodes_then_every_k8s_check_passes(fake: FakeApiServer, tmp_path: Path) -> None:
    fake.cluster.add_node("gpu-1", {"role": "gpu-training"}, ["nvidia.com/gpu"], gpus=8)
    fake.cluster.add_node("cpu-1", {"role": "system"}, [], gpus=0)

    checks = by_name(doctor(Target.DEPLOY, only=["k8s"], kubeconfig=str(_kubeconfig(tmp_path, fake.url))))

    assert {n: c.status for n, c in checks.items()} == dict.fromkeys(checks, CheckStatus.PASS)
    assert "gpu-1 (8 GPUs)" in checks["k8s.gpu_nodes"].measured and "cpu-1" not in checks["k8s.gpu_nodes"].measured


def test_given_no_namespace_untainted_nodes_and_no_node_access_then_each_is_named(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    fake.cluster.namespaces.clear()
    fake.cluster.add_node("gpu-1", {"role": "gpu-training"}, [], gpus=8)
    kubeconfig = str(_kubeconfig(tmp_path, fake.url))

    checks = by_name(doctor(Target.DEPLOY, only=["k8s"], kubeconfig=kubeconfig))
    assert checks["k8s.namespace"].status is CheckStatus.FAIL and "does not exist" in checks["k8s.namespace"].measured
    assert checks["k8s.gpu_nodes"].status is CheckStatus.WARN and "taint" in checks["k8s.gpu_nodes"].fix

    fake.cluster.forbidden_reads.update({"nodes"})
    nodes = by_name(doctor(Target.DEPLOY, only=["k8s"], kubeconfig=kubeconfig))["k8s.gpu_nodes"]
    assert nodes.status is CheckStatus.WARN and "may not list nodes" in nodes.measured


def test_given_a_kubeconfig_without_current_context_then_k8s_config_fails_listing_the_contexts(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    path = _kubeconfig(tmp_path, fake.url, current=False)

    proc = run_cli("rlinf_cli.main", "doctor", "--for", "deploy", "--only", "k8s", "--kubeconfig", str(path), "--json")

    assert proc.returncode == 1
    checks = {c["name"]: c for c in report_of(proc)["checks"]}
    assert checks["k8s.config"]["status"] == "fail"
    assert "no current context (contexts: fake)" in checks["k8s.config"]["measured"]
    assert "use-context" in checks["k8s.config"]["fix"]
    assert checks["k8s.rbac"]["status"] == "skip"


def test_given_no_kubeconfig_then_local_skips_and_deploy_fails(no_cloud: None, tmp_path: Path) -> None:
    local = by_name(doctor(Target.LOCAL, only=["k8s"]))["k8s.config"]
    deploy = by_name(doctor(Target.DEPLOY, only=["k8s"]))["k8s.config"]
    assert local.status is CheckStatus.SKIP and deploy.status is CheckStatus.FAIL
    assert "update-kubeconfig" in deploy.fix


# -- AWS -------------------------------------------------------------------------------------------


def test_given_credentials_and_a_deployed_stack_then_identity_region_and_outputs_are_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import boto3
    from moto import mock_aws

    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    template = {
        "Resources": {"Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "doctor-results"}}},
        "Outputs": {"ResultsBucket": {"Value": {"Ref": "Bucket"}}},
    }
    with mock_aws():
        import json

        boto3.client("cloudformation").create_stack(StackName="rlinf-bench", TemplateBody=json.dumps(template))
        checks = by_name(doctor(Target.DEPLOY, only=["aws"], stack_name="rlinf-bench"))

    assert {n: c.status for n, c in checks.items()} == dict.fromkeys(checks, CheckStatus.PASS)
    assert "arn:aws:" in checks["aws.credentials"].measured and checks["aws.region"].measured == "us-east-1"
    assert checks["aws.stack"].details["outputs"] == {"ResultsBucket": "doctor-results"}
    assert checks["aws.buckets"].measured == "reachable: doctor-results"


def test_given_a_stack_whose_bucket_is_gone_then_aws_buckets_fails_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    import boto3
    from moto import mock_aws

    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {"CheckpointBucket": {"Value": "s3://deleted-bucket/runs"}},
    }
    with mock_aws():
        boto3.client("cloudformation").create_stack(StackName="rlinf-bench", TemplateBody=json.dumps(template))
        buckets = by_name(doctor(Target.DEPLOY, only=["aws"], stack_name="rlinf-bench"))["aws.buckets"]

    assert (
        buckets.status is CheckStatus.FAIL and "deleted-bucket" in buckets.measured and "s3:ListBucket" in buckets.fix
    )


def test_given_no_credentials_then_local_skips_and_deploy_fails_with_the_fix(no_cloud: None) -> None:
    local = by_name(doctor(Target.LOCAL, only=["aws"]))["aws.credentials"]
    deploy = by_name(doctor(Target.DEPLOY, only=["aws"]))["aws.credentials"]
    assert local.status is CheckStatus.SKIP and deploy.status is CheckStatus.FAIL
    assert "aws sso login" in deploy.fix


# -- GPU -------------------------------------------------------------------------------------------


def test_given_this_machine_then_the_gpu_checks_agree_with_nvml() -> None:
    try:
        import pynvml

        pynvml.nvmlInit()
        pynvml.nvmlShutdown()
        has_gpu = True
    except Exception:
        has_gpu = False
    probe = by_name(doctor(Target.PROBE, only=["gpu"]))["gpu.nvml"]
    local = by_name(doctor(Target.LOCAL, only=["gpu"]))["gpu.nvml"]
    if has_gpu:
        assert probe.status is CheckStatus.PASS and "GPU(s)" in probe.measured
    else:
        # No GPU while --for probe asks for NVML: a named failure; for local use only a skip.
        assert probe.status is CheckStatus.FAIL and "NVML unavailable" in probe.measured
        assert "nvidia.com/gpu" in probe.fix
        assert local.status is CheckStatus.SKIP
