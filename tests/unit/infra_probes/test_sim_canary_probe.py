"""The sim_canary probe: planned beside the eval Jobs in the eval image, and its verdict from the canary."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from eval_runner.sim_canary import CANARY
from infra_probes.probe_cli import build_parser, execute
from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.state_plan import plan
from rlinf_aws.state_submit import build_job
from rlinf_bench.contracts import CheckpointRef, EvalRequest, ProbeSpec, ProbeVerdict, SuiteSelection
from rlinf_bench.contracts.request import DEFAULT_PROBES
from rlinf_bench.contracts.workflow import PlanInput, SubmitInput
from rlinf_bench.errors import InvalidRequestError
from rlinf_bench.request_checks import validate_request
from rlinf_doctor import canary_runner as canary

EVAL_IMAGE = "eval@sha256:" + "a" * 64
PROBE_IMAGE = "probe@sha256:" + "b" * 64
SETTINGS = PipelineSettings(results_prefix="s3://b/results", eval_image=EVAL_IMAGE, probe_image=PROBE_IMAGE)
CKPT = CheckpointRef(uri="s3://b/exp/checkpoints/global_step_7", experiment="exp", global_step=7)


def _request(**kw: Any) -> EvalRequest:
    base: dict[str, Any] = {
        "checkpoint": CKPT,
        "suites": [SuiteSelection(name="libero_spatial")],
        "probes": [ProbeSpec(name="gpu"), ProbeSpec(name="sim_canary")],
    }
    return EvalRequest(**{**base, **kw})


def test_sim_canary_is_opt_in() -> None:
    assert "sim_canary" not in DEFAULT_PROBES
    assert [p.name for p in EvalRequest(checkpoint=CKPT).probes] == ["gpu", "nccl"]


def test_a_requested_canary_is_planned_beside_the_eval_jobs_and_runs_in_the_eval_image_without_a_gpu() -> None:
    out = plan(PlanInput(request=_request(), execution="exec-1"), SETTINGS)
    (item,) = [i for i in out.probe_items if i.probe and i.probe.name == "sim_canary"]
    assert item.kind == "probe" and item.result_uri.endswith("sim_canary.json")
    bundle = build_job(SubmitInput(job=out.job, item=item, task_token="t"), SETTINGS)
    container = bundle.job.spec.template.spec.containers[0]
    assert container.image == EVAL_IMAGE
    assert container.command[:4] == ["python", "-m", "infra_probes", "sim_canary"]
    assert "--out" in container.command
    assert "nvidia.com/gpu" not in (container.resources.limits or {})
    (gpu,) = [i for i in out.probe_items if i.probe and i.probe.name == "gpu"]
    gpu_job = build_job(SubmitInput(job=out.job, item=gpu, task_token="t"), SETTINGS)
    assert gpu_job.job.spec.template.spec.containers[0].image == PROBE_IMAGE


def test_a_canary_without_an_eval_image_is_refused_naming_the_field() -> None:
    req = _request(suites=[], probes=[ProbeSpec(name="sim_canary")], probe_image=PROBE_IMAGE)
    with pytest.raises(InvalidRequestError, match=r"image: probe sim_canary runs in the eval image"):
        validate_request(req)


def _doc(moved: list[str]) -> dict[str, Any]:
    """What ``python -m eval_runner.sim_canary --json`` prints: a verdict and the fingerprint of 4 episodes."""
    versions = {"mujoco": "3.3.7"}
    episode = {"task_id": 0, "init_state": 0, "success": True, "steps": 60, "state_sha256": {}}
    return {
        "verdict": {
            "ok": not moved,
            "moved": moved,
            "versions_here": {"mujoco": "3.9.0"} if moved else versions,
            "versions_reference": versions,
            "summary": f"{len(moved)} of 4 canary episodes moved" if moved else "all 4 canary episodes match",
        },
        "fingerprint": {
            "canary": CANARY.model_dump(mode="json"),
            "versions": versions,
            "episodes": [episode] * 4,
            "wall_s": 12.5,
        },
    }


@pytest.mark.parametrize(("moved", "verdict"), [([], ProbeVerdict.PASS), (["task 0 state 0: x"], ProbeVerdict.FAIL)])
def test_the_probe_runs_the_canary_and_judges_its_moved_episodes(
    monkeypatch: pytest.MonkeyPatch, moved: list[str], verdict: ProbeVerdict
) -> None:
    def fake_run(cmd: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        assert cmd[1:] == ["-m", "eval_runner.sim_canary", "--json"]
        return subprocess.CompletedProcess(cmd, int(bool(moved)), stdout="log\n" + json.dumps(_doc(moved)), stderr="")

    monkeypatch.setattr(canary.subprocess, "run", fake_run)
    result = execute(build_parser().parse_args(["sim_canary", "--json"]))
    assert result.verdict == verdict
    assert result.values["moved_episodes"].value == len(moved)
    assert result.details["moved"] == moved
    assert result.details["versions_reference"] == {"mujoco": "3.3.7"}
    if moved:
        assert "1 of 4 canary episodes moved" in result.reason


def test_where_libero_is_missing_the_probe_is_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_run(cmd: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(cmd, 1, stdout="", stderr="ModuleNotFoundError: No module named 'libero'")

    monkeypatch.setattr(canary.subprocess, "run", fake_run)
    result = execute(build_parser().parse_args(["sim_canary"]))
    assert result.verdict == ProbeVerdict.NOT_AVAILABLE and "eval image" in result.reason
