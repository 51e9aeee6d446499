"""A loopback proxy in front of a real MLflow server that can hold the answer to ``runs/create`` (a slow
network: the server has made the run, the client is still waiting) and refuse ``runs/delete``.

The doctor's trial-run tests interrupt the doctor while the answer is held, at the point where the run
exists in the store and the doctor does not know its id yet.
"""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

CREATE = "/api/2.0/mlflow/runs/create"
DELETE = "/api/2.0/mlflow/runs/delete"


class MlflowProxy:
    """``with MlflowProxy(upstream, hold_create=True) as proxy:`` serves ``proxy.uri``."""

    def __init__(self, upstream: str, *, hold_create: bool = False, refuse_delete: bool = False) -> None:
        self.upstream = upstream.rstrip("/")
        self.hold_create, self.refuse_delete = hold_create, refuse_delete
        self.created = threading.Event()  # set once the server has made the run and its answer is held
        self.release = threading.Event()  # set to let the held answer go (or at exit)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.uri = f"http://127.0.0.1:{self.server.server_port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> MlflowProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def _forward(self, body: bytes | None) -> None:
                path = self.path.split("?", 1)[0]
                if path == DELETE and proxy.refuse_delete:
                    self._answer(403, b'{"error_code": "PERMISSION_DENIED", "message": "no delete for you"}')
                    return
                req = urllib.request.Request(
                    proxy.upstream + self.path,
                    data=body,
                    method=self.command,
                    headers={"Content-Type": "application/json"},
                )
                try:
                    with urllib.request.urlopen(req, timeout=30) as resp:
                        status, raw = resp.status, resp.read()
                except urllib.error.HTTPError as exc:
                    status, raw = exc.code, exc.read()
                if path == CREATE and proxy.hold_create:
                    proxy.created.set()
                    proxy.release.wait(60)
                self._answer(status, raw)

            def _answer(self, status: int, raw: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except OSError:  # the client hung up while its answer was held
                    pass

        return Handler
