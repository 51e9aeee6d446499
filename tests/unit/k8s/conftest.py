"""Shared builders for the Kubernetes unit tests."""

from __future__ import annotations

from typing import Any

import pytest

from rlinf_bench.contracts import CheckpointRef, EvalRequest, ProbeSpec, SuiteSelection

K8S_SCHEMA_VERSION = "1.31.0"  # the oldest Kubernetes we promise to work with (EKS standard support)


def make_request(**overrides: Any) -> EvalRequest:
    data: dict[str, Any] = {
        "checkpoint": CheckpointRef(
            uri="/fsx/checkpoints/libero10-rl/checkpoints/global_step_100", experiment="libero10-rl", global_step=100
        ),
        "suites": [SuiteSelection(name="libero_10"), SuiteSelection(name="libero_spatial", tasks=[0, 1])],
        "runs": 3,
        "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/rlinf-eval:0.1.0",
        "probe_image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/rlinf-probe:0.1.0",
        "probes": [
            ProbeSpec(name="gpu"),
            ProbeSpec(name="storage", args=["--path", "/fsx/probe"]),
            ProbeSpec(name="checkpoint_io", args=["--path", "/fsx/probe"]),
            ProbeSpec(name="throughput", args=["--run-id", "abc"]),
            ProbeSpec(name="nccl", nodes=2, gpus_per_node=8),
        ],
        "output_prefix": "s3://results-bucket/rlinf-bench",
    }
    data.update(overrides)
    return EvalRequest(**data)


@pytest.fixture
def request_obj() -> EvalRequest:
    return make_request()
