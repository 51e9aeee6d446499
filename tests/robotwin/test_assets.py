"""The asset boundary: without the RoboTwin assets an evaluation exits 2 with the fix, never a traceback.

These run the real entry points in a subprocess (as a Job's container would), against the installed
runtime and its own asset validator; no scene is built because none can be without the assets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("robotwin", reason="needs the RoboTwin runtime: runs in .venv-robotwin (make test-robotwin)")

from eval_runner.envs.robotwin_assets import ASSETS_ENV, AssetsMissingError, download_command, resolve_assets

REPO = Path(__file__).resolve().parents[2]


def _run(args: list[str], cwd: Path, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (ASSETS_ENV, "ASSETS_PATH")}
    env["PYTHONPATH"] = str(REPO)
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_given_the_runtime_then_its_download_command_is_read_from_its_entry_points() -> None:
    assert download_command() == "robotwin-download-assets"


def test_given_no_assets_anywhere_when_evaluating_then_exit_2_names_the_default_and_the_download(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run0.json"
    proc = _run(
        [
            "-m",
            "eval_runner.robotwin",
            "--suite",
            "robotwin/lift_pot",
            "--trials",
            "1",
            "--policy",
            "builtin:hold",
            "--out",
            str(out),
        ],
        cwd=tmp_path,
    )

    assert proc.returncode == 2, proc.stderr
    err = proc.stderr
    assert "RoboTwin assets are missing" in err
    assert f"looked in {tmp_path.resolve()}" in err and "the runtime's default" in err and ASSETS_ENV in err
    assert "robotwin-download-assets --output DIR" in err
    assert "assets/embodiments/aloha-agilex" in err  # what the runtime's validator found missing
    assert "Traceback" not in err and "sapien" not in err.lower()
    result = json.loads(out.read_text())
    assert result["status"] == "failed" and "RoboTwin assets are missing" in result["error"]
    assert result["tasks"][0]["task_name"] == "lift_pot" and result["episodes"] == 0


def test_given_the_env_variable_on_an_incomplete_snapshot_then_the_message_names_it(tmp_path: Path) -> None:
    root = tmp_path / "robotwin-assets"
    (root / "assets" / "objects").mkdir(parents=True)
    proc = _run(
        [
            "-m",
            "eval_runner",
            "--suite",
            "robotwin_short",
            "--trials",
            "1",
            "--policy",
            "builtin:hold",
            "--out",
            str(tmp_path / "r.json"),
        ],
        cwd=tmp_path,
        env_extra={ASSETS_ENV: str(root)},
    )

    assert proc.returncode == 2, proc.stderr
    assert f"looked in {root} (from ${ASSETS_ENV})" in proc.stderr
    assert "background_texture" in proc.stderr and "Traceback" not in proc.stderr


def test_given_a_snapshot_of_another_revision_then_it_is_refused(tmp_path: Path) -> None:
    for sub in ("background_texture", "embodiments/aloha-agilex", "objects"):
        (tmp_path / "assets" / sub).mkdir(parents=True)
    (tmp_path / ".robotwin-assets.json").write_text(json.dumps({"revision": "0" * 40}))

    with pytest.raises(AssetsMissingError, match="revision mismatch"):
        resolve_assets(tmp_path)


def test_given_a_complete_layout_then_it_resolves_with_the_runtimes_identity(tmp_path: Path) -> None:
    # Folder layout only: this proves the lookup order, not that a scene can be built.
    for sub in ("background_texture", "embodiments/aloha-agilex", "objects"):
        (tmp_path / "assets" / sub).mkdir(parents=True)

    found = resolve_assets(environ={ASSETS_ENV: str(tmp_path)})

    assert found.root == tmp_path.resolve() and found.source == f"${ASSETS_ENV}"
    assert found.identity["repository"] == "TianxingChen/RoboTwin2.0"
    assert resolve_assets(tmp_path, environ={}).source == "--assets"
