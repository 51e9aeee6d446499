"""Python, the extras and package drift, read from the installed distributions."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest

from rlinf_bench.doctor import CheckResult, CheckStatus, DoctorContext, Target
from rlinf_doctor import checks_env


def test_given_the_installed_distribution_then_extras_are_read_from_its_metadata() -> None:
    extras = checks_env.extras_requirements()
    assert {"libero", "probes", "aws", "k8s", "tracking"} <= set(extras)
    assert any(r.startswith("rlinf-libero") for r in extras["libero"])


def test_given_requirements_then_unmet_names_missing_and_wrong_versions() -> None:
    assert checks_env.unmet("surely-not-installed-pkg-xyz>=1") == "surely-not-installed-pkg-xyz missing"
    assert "need <1" in (checks_env.unmet("pydantic<1") or "")
    assert checks_env.unmet("pydantic>=2") is None


def test_given_a_reference_version_that_differs_then_drift_warns_naming_the_package_and_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        checks_env,
        "reference_versions",
        lambda: {"packages": {"pydantic": {"version": "0.0.1", "why": "contracts"}}, "watch": {}},
    )
    [drift] = checks_env.check_packages(DoctorContext(target=Target.EVAL))
    assert drift.status is CheckStatus.WARN
    assert "pydantic" in drift.measured and "results made with 0.0.1: contracts" in drift.measured


def test_given_a_watched_package_newer_than_its_limit_then_a_warning_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        checks_env,
        "reference_versions",
        lambda: {"packages": {}, "watch": {"pydantic": {"max": "1.0", "why": "a fork  is\n needed"}}},
    )
    _, watched = checks_env.check_packages(DoctorContext(target=Target.EVAL))
    assert watched.name == "packages.pydantic" and watched.status is CheckStatus.WARN
    assert "newer than 1.0" in watched.measured and "a fork is needed" in watched.fix


def test_given_the_shipped_reference_then_it_names_the_simulator_stack() -> None:
    ref = checks_env.reference_versions()
    assert {"rlinf-libero", "robosuite", "mujoco", "numpy"} <= set(ref["packages"])
    assert "transformers" in ref["watch"]


def _transformers_check(ctx: DoctorContext | None = None) -> CheckResult:
    [watched] = [c for c in checks_env.check_packages(ctx or DoctorContext()) if c.name == "packages.transformers"]
    return watched


def test_given_the_transformers_our_lock_installs_then_doctor_does_not_warn_about_it() -> None:
    installed = importlib.metadata.version("transformers")
    assert installed == checks_env.reference_versions()["watch"]["transformers"]["locked"]  # .venv is the lock's

    watched = _transformers_check()

    assert watched.status is CheckStatus.PASS, watched.measured
    assert f"transformers {installed} from index: the version rlinf-bench's lock installs" in watched.measured


def test_given_the_reference_then_its_locked_transformers_is_the_one_in_uv_lock() -> None:
    lock = tomllib.loads((Path(__file__).resolve().parents[3] / "uv.lock").read_text())
    [pinned] = [p["version"] for p in lock["package"] if p["name"] == "transformers"]
    assert checks_env.reference_versions()["watch"]["transformers"]["locked"] == pinned


def test_given_a_transformers_other_than_the_locked_one_above_the_limit_then_doctor_still_warns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = checks_env._version
    monkeypatch.setattr(checks_env, "_version", lambda name: "5.99.0" if name == "transformers" else real(name))

    watched = _transformers_check()

    assert watched.status is CheckStatus.WARN
    assert "transformers 5.99.0 from index, newer than 4.57.6" in watched.measured and "openvla-oft" in watched.fix


def test_given_the_locked_transformers_beside_a_policy_that_needs_the_limit_then_doctor_warns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ref = checks_env.reference_versions()
    ref["watch"]["transformers"]["limit_for"] = ["json"]  # stands in for prismatic: a module that imports here
    monkeypatch.setattr(checks_env, "reference_versions", lambda: ref)

    watched = _transformers_check()

    assert watched.status is CheckStatus.WARN and "beside json, which needs <=4.57.6" in watched.measured
