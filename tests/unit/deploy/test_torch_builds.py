"""Set-up on a machine without the local CPU torch wheel: the lock installs PyPI's torch there, the CPU build here.

The lock names the CPU wheel's folder (pyproject.toml's "torch-cpu" index). To see a machine without it, each test
copies the Makefile, pyproject.toml and uv.lock to a scratch folder with that folder's path moved to one under the
test's tmp_path (the same text uv writes for a folder there), then runs the Makefile's own set-up targets with
`uv sync --dry-run`: the plan is checked, nothing is downloaded.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
CPU_WHEEL = "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
COPIED = ("Makefile", "pyproject.toml", "uv.lock", "README.md")
# The Makefile's SYNC with --dry-run: the real targets and extras, a plan instead of an install.
DRY_SYNC = "SYNC=UV_PROJECT_ENVIRONMENT=$(1) $(UV) sync --locked --dry-run $(2)"


def cpu_wheel_folder() -> str:
    """The folder pyproject.toml's torch-cpu index names (where these machines keep the CPU build)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    [index] = [i for i in project["tool"]["uv"]["index"] if i["name"] == "torch-cpu"]
    return str(index["url"])


def checkout_with_wheels_at(tmp_path: Path, folder: Path) -> Path:
    """A copy of the set-up files whose CPU wheel folder is `folder` (which may not exist)."""
    root = tmp_path / "checkout"
    root.mkdir()
    for name in COPIED:
        text = (REPO / name).read_text()
        (root / name).write_text(text.replace(cpu_wheel_folder(), str(folder)))
    return root


def make(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the copy's Makefile; a user's find-links folders must not change what set-up installs. Settings of a
    make that runs this test (``make test TORCH=…``) reach a sub-make through MAKEFLAGS: they are left out."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "TORCH")}
    env |= {"UV_FIND_LINKS": cpu_wheel_folder(), "PIP_FIND_LINKS": cpu_wheel_folder()}
    make_bin = shutil.which("make")
    if make_bin is None:
        pytest.skip("no make on PATH")
    return subprocess.run(
        [make_bin, "--no-print-directory", "-C", str(root), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


def planned(output: str, package: str) -> list[str]:
    """The versions of `package` a `uv sync --dry-run` plan installs (lines ` + name==version`)."""
    return re.findall(rf"^ \+ {re.escape(package)}==(\S+)$", output, re.M)


def test_the_makefile_looks_for_the_cpu_wheel_where_pyproject_names_its_folder() -> None:
    makefile = (REPO / "Makefile").read_text()
    assert re.search(rf"^TORCH_CPU_WHEELS := {re.escape(cpu_wheel_folder())}$", makefile, re.M)


def test_given_no_cpu_wheel_folder_then_make_setup_installs_pypis_torch_from_the_same_lock(tmp_path: Path) -> None:
    # GIVEN a checkout whose CPU wheel folder does not exist (a researcher's workstation, a GPU box)
    root = checkout_with_wheels_at(tmp_path, tmp_path / "no-such-folder")

    # WHEN the lock is checked and set-up plans every venv that has torch
    check = make(root, "lock-check")
    setup = make(root, DRY_SYNC, "setup-main", "setup-rlinf", "setup-robotwin")

    # THEN the lock still matches, and each venv gets PyPI's torch 2.13.0 (the CUDA build, with its nvidia wheels)
    assert check.returncode == 0, check.stderr
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert "torch: PyPI's 2.13.0, the CUDA 13 build" in setup.stdout
    output = setup.stdout + setup.stderr
    assert planned(output, "torch") == ["2.13.0"] * 3, output
    assert len(planned(output, "nvidia-cudnn-cu13")) == 3, output


def test_given_the_cpu_wheel_folder_then_make_setup_installs_the_cpu_build_from_it(tmp_path: Path) -> None:
    # GIVEN a checkout whose CPU wheel folder holds the CPU build (these machines, CI)
    real = Path(cpu_wheel_folder()) / CPU_WHEEL
    if not real.exists():
        pytest.skip(f"this machine has no {real}")
    folder = tmp_path / "wheels"
    folder.mkdir()
    (folder / CPU_WHEEL).symlink_to(real)
    root = checkout_with_wheels_at(tmp_path, folder)

    # WHEN set-up plans the main venv
    setup = make(root, DRY_SYNC, "setup-main")

    # THEN torch is the local CPU build and nothing from CUDA comes with it
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert f"torch: the CPU build from {folder}" in setup.stdout
    output = setup.stdout + setup.stderr
    assert planned(output, "torch") == ["2.13.0+cpu"], output
    assert not planned(output, "nvidia-cudnn-cu13"), output
