"""Jobs run images by digest, and the digest lands in every RunResult/ProbeResult's provenance."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rlinf_bench.contracts import EvalRequest
from rlinf_bench.provenance import collect_provenance
from rlinf_doctor.nvml_gpus import NvmlGpus
from rlinf_k8s.jobs import jobs_for_request
from rlinf_k8s.jobspec import IMAGE_DIGEST_ENV

REPO = Path(__file__).resolve().parents[3]

EVAL_DIGEST = "sha256:" + "1" * 64
PROBE_DIGEST = "sha256:" + "2" * 64


def request(**overrides: str) -> EvalRequest:
    data = yaml.safe_load((REPO / "deploy/tools/checkov-request.yaml").read_text())
    data.update(overrides)
    return EvalRequest.from_dict(data, source="checkov-request.yaml")


def container_env(bundle_job: object) -> dict[str, str]:
    [container] = bundle_job.spec.template.spec.containers  # type: ignore[attr-defined]
    return {e.name: e.value for e in container.env if e.value is not None}


def test_given_images_by_digest_then_every_job_passes_its_digest() -> None:
    bundles = jobs_for_request(request())
    assert {b.kind for b in bundles} == {"eval", "probe"}
    for b in bundles:
        expected = EVAL_DIGEST if b.kind == "eval" else PROBE_DIGEST
        assert container_env(b.job)[IMAGE_DIGEST_ENV] == expected, b.name


def test_given_an_image_by_tag_then_no_digest_is_claimed() -> None:
    bundles = jobs_for_request(request(image="registry.example.com/rlinf-eval:0.1.0"))
    eval_env = container_env(next(b for b in bundles if b.kind == "eval").job)
    assert IMAGE_DIGEST_ENV not in eval_env


def test_given_the_jobs_environment_then_provenance_records_the_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    env = container_env(next(b for b in jobs_for_request(request()) if b.kind == "eval").job)
    monkeypatch.setenv(IMAGE_DIGEST_ENV, env[IMAGE_DIGEST_ENV])
    assert collect_provenance(gpus=NvmlGpus(), command=["python", "-m", "eval_runner"]).image_digest == EVAL_DIGEST
