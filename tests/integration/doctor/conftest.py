"""Helpers for doctor's tests: run the checks in-process, or the CLI in a child with a chosen environment."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from rlinf_bench.doctor import CheckResult, DoctorContext, DoctorReport, Target
from rlinf_doctor.check_runner import run_doctor

REPO = Path(__file__).resolve().parents[3]


def doctor(target: Target = Target.LOCAL, **options: Any) -> DoctorReport:
    return run_doctor(DoctorContext(target=target, **options))


def by_name(report: DoctorReport) -> dict[str, CheckResult]:
    return {c.name: c for c in report.checks}


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def run_cli(
    *argv: str, env: Mapping[str, str | None] | None = None, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python -m <argv>`` in a child; ``env`` values of None remove the variable."""
    child = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            child.pop(key, None)
        else:
            child[key] = value
    return subprocess.run(
        [sys.executable, "-m", *argv], capture_output=True, text=True, env=child, cwd=cwd or REPO, timeout=timeout
    )


def report_of(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


@pytest.fixture
def no_cloud(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No AWS credentials or kubeconfig, whatever the machine has."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "KUBECONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real MLflow tracking server (sqlite store) on a loopback port, for the module's tests; its URI."""
    store = tmp_path_factory.mktemp("mlflow")
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("mlflow_app_server.py")), str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        uri = proc.stdout.readline().strip()
        assert uri.startswith("http://127.0.0.1:"), "the MLflow app did not start"
        yield uri
    finally:
        proc.terminate()
        proc.wait(timeout=30)
