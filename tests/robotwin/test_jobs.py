"""EvalRequests with RoboTwin suites: accepted, validated, and run in the RoboTwin image."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the Job builder runs in the main venv (make test)")

from rlinf_bench.contracts import SuiteSelection
from rlinf_bench.errors import JobSpecError, UnknownSuiteError
from rlinf_k8s.dns_names import validate_label_value
from rlinf_k8s.jobs import JobBundle, jobs_for_request
from rlinf_k8s.pod_security import check_restricted, pod_spec_of
from tests.unit.k8s.conftest import make_request

ROBOTWIN_IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/rlinf-eval-robotwin:0.1.0"


def _image(bundle: JobBundle) -> str:
    job = next(m for m in bundle.manifests() if m["kind"] == "Job")
    image: str = job["spec"]["template"]["spec"]["containers"][0]["image"]
    return image


def _request(**kw: object):  # type: ignore[no-untyped-def]
    kw.setdefault("robotwin_image", ROBOTWIN_IMAGE)
    kw.setdefault(
        "suites",
        [
            SuiteSelection(name="libero_10"),
            SuiteSelection(name="robotwin_short"),
            SuiteSelection(name="robotwin/click_bell"),
        ],
    )
    return make_request(probes=[], **kw)


def test_given_libero_and_robotwin_suites_then_each_job_gets_its_suites_image() -> None:
    bundles = jobs_for_request(_request())

    images = {b.name: _image(b) for b in bundles}
    assert len(bundles) == 9  # 3 suites x 3 runs
    assert {i for n, i in images.items() if "robotwin" in n} == {ROBOTWIN_IMAGE}
    assert {i for n, i in images.items() if "robotwin" not in n} == {make_request().image}
    for bundle in bundles:
        job = next(m for m in bundle.manifests() if m["kind"] == "Job")
        assert check_restricted(pod_spec_of(job)) == []
        for value in job["metadata"]["labels"].values():
            validate_label_value(value, field="label")  # robotwin/<task> has a slash: labels must still be valid


def test_given_robotwin_suites_without_a_robotwin_image_then_the_request_is_rejected_with_the_fix() -> None:
    with pytest.raises(JobSpecError, match=r"no `robotwin_image`.*Dockerfile.eval-robotwin"):
        jobs_for_request(_request(robotwin_image=""))


def test_given_only_robotwin_suites_then_no_libero_image_is_needed() -> None:
    bundles = jobs_for_request(
        make_request(suites=[SuiteSelection(name="robotwin")], probes=[], image="", robotwin_image=ROBOTWIN_IMAGE)
    )
    assert {_image(b) for b in bundles} == {ROBOTWIN_IMAGE}


def test_given_an_unknown_robotwin_task_then_the_error_names_the_runtime_task() -> None:
    with pytest.raises(UnknownSuiteError, match="Did you mean 'blocks_ranking_rgb'"):
        jobs_for_request(_request(suites=[SuiteSelection(name="robotwin/blocks_rank_rgb")]))


def test_given_the_robotwin_image_then_it_runs_as_the_jobs_uid_with_vulkan_and_the_venvs_install_steps() -> None:
    from rlinf_bench.contracts import JobSettings

    docker = Path(__file__).resolve().parents[2] / "docker"
    text = (docker / "Dockerfile.eval-robotwin").read_text()
    uid = JobSettings().run_as_user

    assert re.findall(r"^USER\s+(\S+)", text, flags=re.M)[-1] == f"{uid}:{uid}"
    assert "ENV PATH=/opt/venv/bin:$PATH" in text and "ENTRYPOINT" not in text
    assert (docker / "Dockerfile.eval-robotwin.dockerignore").exists()
    # SAPIEN renders with Vulkan: the loader needs the NVIDIA ICD and the graphics capability.
    assert "nvidia_icd.json" in text and "NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics" in text
    # The same files `make setup-robotwin` installs, in the same order (runtime without its deps).
    assert "pip install -r robotwin-reqs/requirements.txt" in text
    assert "pip install --no-deps -r robotwin-reqs/runtime.txt" in text
    assert "ROBOTWIN_ASSETS_ROOT=" in text
