"""The images agree with the Jobs that run them (no Docker here, so these are static checks)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rlinf_bench.contracts import JobSettings
from rlinf_k8s.jobs import BASE_ENV

DOCKER = Path(__file__).resolve().parents[3] / "docker"


@pytest.mark.parametrize("name", ["Dockerfile.eval", "Dockerfile.probe"])
def test_given_an_image_then_it_runs_as_the_uid_the_jobs_declare_with_python_on_path(name: str) -> None:
    text = (DOCKER / name).read_text()
    uid = JobSettings().run_as_user

    users = re.findall(r"^USER\s+(\S+)", text, flags=re.M)
    assert users and users[-1] == f"{uid}:{uid}"  # numeric, so runAsNonRoot can verify it
    assert "ENV PATH=/opt/venv/bin:$PATH" in text  # the Jobs call plain `python`
    assert "ENTRYPOINT" not in text  # Jobs set command; an entrypoint would be silently replaced
    assert (DOCKER / f"{name}.dockerignore").exists()


def test_given_the_eval_image_then_egl_and_libero_are_configured_at_build_time() -> None:
    text = (DOCKER / "Dockerfile.eval").read_text()

    assert "NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics" in text
    assert BASE_ENV["NVIDIA_DRIVER_CAPABILITIES"] == "compute,utility,graphics"
    assert "10_nvidia.json" in text
    assert "configure_libero(" in text and "</dev/null" in text
    assert "LIBERO_CONFIG_PATH=" in text


@pytest.mark.sim
def test_given_the_eval_images_build_steps_then_they_run_against_the_current_code_without_a_prompt(
    tmp_path: Path,
) -> None:
    # Run the Dockerfile's own `python -c "..."` steps (cache path redirected), stdin closed like
    # `docker build`: LIBERO must configure itself and import without asking anything.
    text = (DOCKER / "Dockerfile.eval").read_text()
    steps = re.findall(r'python -c "([^"]+)"', text)
    assert len(steps) == 2
    cache = tmp_path / "cache"
    env = {**os.environ, "RLINF_BENCH_CACHE": str(cache), "LIBERO_CONFIG_PATH": str(cache / "libero")}
    for code in steps:
        code = code.replace("/opt/rlinf-bench/cache", str(cache))
        proc = subprocess.run(
            [sys.executable, "-c", code], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert (cache / "libero" / "config.yaml").exists()
