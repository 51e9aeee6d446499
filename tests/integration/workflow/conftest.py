"""Fixtures for the workflow tests: a real MLflow server on loopback, a Slack webhook catcher, moto."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.mlflow_server import MlflowServer, free_port

__all__ = ["MlflowServer", "SlackCatcher", "free_port"]


@pytest.fixture(scope="package")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    server = MlflowServer(tmp_path_factory.mktemp("mlflow-server"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


class SlackCatcher:
    """An incoming-webhook stand-in on loopback; ``fail`` makes it answer 500."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.fail = False
        catcher = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if catcher.fail:
                    self.send_response(500)
                    self.end_headers()
                    return
                catcher.received.append(json.loads(body))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/services/T000/B000/XXXX"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def slack() -> Iterator[SlackCatcher]:
    catcher = SlackCatcher()
    try:
        yield catcher
    finally:
        catcher.close()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
