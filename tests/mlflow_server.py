"""``mlflow server`` over HTTP on loopback, the way the publisher Lambda reaches a tracking server.

Shared by the workflow tests and the tracking tests (a real server, not only a sqlite store).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from rlinf_tracking.local_store import prepare_sqlite_store


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MlflowServer:
    """``mlflow server`` over HTTP on loopback, the way the publisher Lambda reaches a tracking server."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 240.0) -> None:
        # The server would run every schema migration on a new database: copy the migrated template instead.
        prepare_sqlite_store(f"sqlite:///{self.root / 'mlflow.db'}")
        exe = Path(sys.executable).with_name("mlflow")
        cmd = [
            str(exe) if exe.exists() else shutil.which("mlflow") or "mlflow",
            "server",
            "--backend-store-uri",
            f"sqlite:///{self.root / 'mlflow.db'}",
            "--artifacts-destination",
            str(self.root / "artifacts"),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--workers",
            "1",
        ]
        log = (self.root / "server.log").open("wb")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mlflow server exited: {(self.root / 'server.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.uri}/health", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"mlflow server did not answer /health within {timeout_s} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
