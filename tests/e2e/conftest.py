"""Fixtures for the end-to-end tests: demo checkpoints, a tiny eval matrix, the CLI as a user runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from eval_runner.demo_checkpoint import write_demo_checkpoint
from rlinf_local.budget import small_matrix_yaml
from rlinf_local.stack import TOOLS_PYTHON

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Cli:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self.stdout)
        return doc


def rlinf_bench(*args: str, timeout: float = 900) -> Cli:
    """``rlinf-bench ARGS`` in a process of its own, as a user runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MOTO_", "MLFLOW_"))}
    proc = subprocess.run(
        # The console script, as a user runs it (``python -m`` from the checkout could read a stale
        # rlinf_bench.egg-info there instead of the installed entry points).
        [str(Path(sys.executable).with_name("rlinf-bench")), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=timeout,
        check=False,
    )
    return Cli(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture(autouse=True)
def need_samtranslator(request: pytest.FixtureRequest) -> None:
    """The stack is made with samtranslator (.venv-tools): skip without it here, fail without it in CI."""
    if request.node.get_closest_marker("sim") is None or TOOLS_PYTHON.exists():
        return
    message = f"aws-sam-translator is not installed at {TOOLS_PYTHON}: run `make setup-sam`"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def demo_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete demo checkpoint: <root>/demo/checkpoints/global_step_100."""
    root = tmp_path_factory.mktemp("runs")
    write_demo_checkpoint(root, experiment="demo", global_step=100, seed=0)
    return root / "demo" / "checkpoints" / "global_step_100"


@pytest.fixture
def tiny_config(tmp_path: Path) -> Path:
    """The smallest real budget: LIBERO-Spatial task 0, 1 trial, 1 run, 5 steps; the gpu and storage probes;
    no videos (the one CI budget that records none)."""
    return write_tiny_config(tmp_path / "tiny.yaml", tmp_path / "scratch", videos=0)


def write_tiny_config(path: Path, scratch: Path, *, videos: int | None) -> Path:
    """The tiny budget at ``path``; ``videos=None`` leaves the matrix's default."""
    path.write_text(
        small_matrix_yaml(
            scratch, max_steps=5, tasks=(0,), trials=1, runs=1, workers=1, probes=("gpu", "storage"), videos=videos
        )
    )
    return path


def copy_checkpoint(src: Path, root: Path, *, step: int, skip_last: bool = False) -> Path:
    """Copy a checkpoint to <root>/demo/checkpoints/global_step_<step>; ``skip_last``: all but full_weights.pt."""
    dst = root / "demo" / "checkpoints" / f"global_step_{step}"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("full_weights.pt") if skip_last else None)
    return dst
