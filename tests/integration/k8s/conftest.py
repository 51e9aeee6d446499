"""Fixtures: a fake Kubernetes API server on loopback and a client wired to it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rlinf_bench.contracts import CheckpointRef, EvalRequest, ProbeSpec
from rlinf_k8s.api_client import ApiCaller, RetryPolicy, api_client_for_url
from tests.integration.k8s.fake_apiserver import FakeApiServer


class SleepRecorder:
    """Stands in for time.sleep so retry tests are instant and can check the backoff."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def fake() -> Iterator[FakeApiServer]:
    with FakeApiServer() as server:
        yield server


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def policy(sleeps: SleepRecorder) -> RetryPolicy:
    return RetryPolicy(attempts=3, backoff_s=0.1, max_backoff_s=1.0, sleep=sleeps)  # no jitter: exact waits


@pytest.fixture
def caller(fake: FakeApiServer, policy: RetryPolicy) -> ApiCaller:
    return ApiCaller(api_client_for_url(fake.url, token="static-test-token"), policy=policy)


@pytest.fixture
def request_obj() -> EvalRequest:
    return EvalRequest(
        checkpoint=CheckpointRef(uri="s3://ckpts/exp1/checkpoints/global_step_100", experiment="exp1", global_step=100),
        suites=["libero_spatial"],
        runs=2,
        seeds=[0, 1],
        image="123456789012.dkr.ecr.us-east-1.amazonaws.com/rlinf-eval:1.0",
        probe_image="123456789012.dkr.ecr.us-east-1.amazonaws.com/rlinf-probe:1.0",
        probes=[ProbeSpec(name="nccl", nodes=2, gpus_per_node=8)],
        output_prefix="s3://results/rlinf-bench",
    )
