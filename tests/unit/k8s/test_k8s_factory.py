"""One string picks the backend; bad strings get a clear error."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import boto3
import pytest
from moto import mock_aws

from rlinf_bench.errors import ConfigError
from rlinf_k8s.kubernetes_backend import KubernetesSubmitter
from rlinf_k8s.submitter import Submitter
from rlinf_k8s.submitter_factory import submitter_for


def test_given_local_then_the_backend_the_caller_passes_in_gets_what_follows_local() -> None:
    asked: list[str] = []

    def local(rest: str) -> Submitter:
        asked.append(rest)
        return cast(Submitter, object())

    submitter_for("local:/jobs?parallel=3", local=local)

    assert asked == ["/jobs?parallel=3"]


def test_given_local_without_a_local_backend_then_the_error_says_where_local_jobs_run() -> None:
    with pytest.raises(ConfigError, match=r"local Jobs run in the embedded default .* name a cluster"):
        submitter_for("local:/jobs")


def test_given_a_kubeconfig_then_a_kubernetes_submitter(tmp_path: Path) -> None:
    cfg = tmp_path / "kc"
    cfg.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'http://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
    )

    assert isinstance(submitter_for(f"kubeconfig:{cfg}#c"), KubernetesSubmitter)


@mock_aws
def test_given_eks_with_a_region_then_a_kubernetes_submitter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    role = boto3.client("iam", region_name="eu-west-1").create_role(RoleName="r", AssumeRolePolicyDocument="{}")
    boto3.client("eks", region_name="eu-west-1").create_cluster(
        name="rlinf", roleArn=role["Role"]["Arn"], resourcesVpcConfig={"subnetIds": []}
    )

    assert isinstance(submitter_for("eks:rlinf@eu-west-1"), KubernetesSubmitter)


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [("slurm:x", "unknown compute backend"), ("eks:", "names no cluster")],
)
def test_given_a_bad_spec_then_a_clear_error(spec: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        submitter_for(spec)
