"""EKS access: the token is a presigned STS URL bound to the cluster; endpoint and CA from DescribeCluster (moto)."""

from __future__ import annotations

import base64
from urllib.parse import parse_qs, urlparse

import boto3
import botocore.session
import pytest
from moto import mock_aws

from rlinf_bench.errors import ConfigError
from rlinf_k8s.api_client import api_client_for_eks
from rlinf_k8s.eks_auth import TOKEN_PREFIX, EksTokenProvider, describe_cluster, make_token


@pytest.fixture
def sts() -> object:
    session = botocore.session.Session()
    session.set_credentials("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    return session.create_client("sts", region_name="eu-west-1")


def _decode(token: str) -> str:
    raw = token[len(TOKEN_PREFIX) :]
    return base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode()


def test_given_static_credentials_when_making_a_token_then_it_is_a_presigned_sts_url_bound_to_the_cluster(
    sts: object,
) -> None:
    token = make_token(sts, "rlinf-prod")

    assert token.startswith("k8s-aws-v1.")
    assert "=" not in token  # URL-safe base64 without padding
    url = urlparse(_decode(token))
    query = parse_qs(url.query)
    assert url.scheme == "https" and url.hostname == "sts.eu-west-1.amazonaws.com"  # regional, like the cluster
    assert query["Action"] == ["GetCallerIdentity"]
    assert query["X-Amz-Expires"] == ["60"]
    assert "x-k8s-aws-id" in query["X-Amz-SignedHeaders"][0].split(";")
    assert query["X-Amz-Credential"][0].startswith("AKIAIOSFODNN7EXAMPLE/")
    assert "X-Amz-Signature" in query


def test_given_two_clusters_then_their_tokens_differ(sts: object) -> None:
    assert make_token(sts, "cluster-a") != make_token(sts, "cluster-b")


def test_given_a_cached_token_then_it_is_reused_until_shortly_before_15_minutes(sts: object) -> None:
    now = [1000.0]
    provider = EksTokenProvider(sts, "rlinf-prod", clock=lambda: now[0])

    provider.token()
    now[0] += 13 * 60
    provider.token()
    assert provider.minted == 1
    now[0] += 60.5  # 14 min after minting: inside the refresh margin of the 15 min lifetime
    provider.token()
    assert provider.minted == 2
    provider.token(force_refresh=True)
    assert provider.minted == 3


def test_given_an_empty_cluster_name_then_a_clear_error(sts: object) -> None:
    with pytest.raises(ConfigError, match="cluster name is empty"):
        make_token(sts, "")


@mock_aws
def test_given_an_eks_cluster_when_described_then_endpoint_and_ca_are_returned(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    eks = boto3.client("eks", region_name="us-east-1")
    iam = boto3.client("iam", region_name="us-east-1")
    role = iam.create_role(RoleName="eks", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    eks.create_cluster(name="rlinf", roleArn=role, resourcesVpcConfig={"subnetIds": []})

    endpoint = describe_cluster(eks, "rlinf")
    caller = api_client_for_eks(eks, boto3.client("sts", region_name="us-east-1"), "rlinf", ca_dir=tmp_path)  # type: ignore[arg-type]

    assert endpoint.endpoint.startswith("https://")
    assert endpoint.ca_pem
    config = caller.api_client.configuration
    assert config.host == endpoint.endpoint
    assert open(config.ssl_ca_cert, "rb").read() == endpoint.ca_pem  # noqa: SIM115
    assert config.get_api_key_with_prefix("authorization").startswith("Bearer k8s-aws-v1.")


@mock_aws
def test_given_an_unknown_cluster_then_a_config_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")

    with pytest.raises(ConfigError, match="'nope' not found in region us-east-1"):
        describe_cluster(boto3.client("eks", region_name="us-east-1"), "nope")
