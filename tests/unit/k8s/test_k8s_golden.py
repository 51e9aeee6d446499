"""Golden files: the rendered YAML of a fixed request, compared byte for byte.

A change to what we send to clusters shows up as a diff in review. To accept an intended change,
regenerate locally (never in CI):  RLINF_BENCH_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/k8s/test_k8s_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rlinf_bench.contracts import CheckpointLayout, CheckpointRef, ProbeSpec, SuiteSelection
from rlinf_k8s.jobs import jobs_for_request
from rlinf_k8s.render_manifests import bundle_yaml
from tests.unit.k8s.conftest import make_request

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("RLINF_BENCH_UPDATE_GOLDEN") == "1"


def _bundles() -> dict[str, str]:
    req = make_request(
        checkpoint=CheckpointRef(
            uri="s3://rlinf-ckpts/libero10-rl/checkpoints/global_step_250",
            experiment="libero10-rl",
            global_step=250,
            layout=CheckpointLayout.FSDP_DCP,  # as the intake found it
        ),
        suites=[SuiteSelection(name="libero_10", tasks=[0, 1], max_steps=520)],
        runs=1,
        seeds=[7],
        probes=[ProbeSpec(name="gpu", args=["--window-s", "30"]), ProbeSpec(name="nccl", nodes=2, gpus_per_node=8)],
    )
    bundles = jobs_for_request(req, extra_env={"RLINF_BENCH_CALLBACK": "sfn-task-token-placeholder"})
    names = {"eval": "eval-job.yaml"}
    out: dict[str, str] = {}
    for b in bundles:
        key = names.get(b.kind) or ("nccl-probe.yaml" if b.service is not None else "gpu-probe.yaml")
        out[key] = bundle_yaml(b)
    return out


@pytest.mark.parametrize("filename", ["eval-job.yaml", "gpu-probe.yaml", "nccl-probe.yaml"])
def test_given_the_fixed_request_then_the_rendered_yaml_matches_the_golden_file(filename: str) -> None:
    rendered = _bundles()[filename]
    path = GOLDEN / filename
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(rendered)
    assert path.exists(), f"missing {path}; create it with RLINF_BENCH_UPDATE_GOLDEN=1"
    assert rendered == path.read_text(), f"{filename} changed; review, then regenerate with RLINF_BENCH_UPDATE_GOLDEN=1"
