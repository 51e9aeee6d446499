"""Headless Chromium driven over the DevTools protocol (CDP), for what ``--dump-dom`` cannot see: scripts run
in the page (a <video>'s playback state) and screenshots taken after them. Only the stdlib and websockets."""

from __future__ import annotations

import base64
import json
import subprocess
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from websockets.sync.client import ClientConnection, connect

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--mute-audio",
    "--autoplay-policy=no-user-gesture-required",
    "--remote-debugging-port=0",  # Chromium picks a free port and writes it to DevToolsActivePort
)


class Browser:
    """``with Browser(chromium, profile) as page: page.open(url); page.run(js)`` on one page target."""

    def __init__(self, chromium: str, profile: Path) -> None:
        self.chromium, self.profile = chromium, profile
        self._next = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._ws: ClientConnection | None = None

    def __enter__(self) -> Browser:
        self.profile.mkdir(parents=True, exist_ok=True)
        cmd = [self.chromium, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port = self._port(deadline=time.monotonic() + 60)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            targets = json.load(resp)
        url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        self._ws = connect(url, max_size=None, open_timeout=30)
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        if self._ws is not None:
            self._ws.close()
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=30)

    def _port(self, deadline: float) -> str:
        active = self.profile / "DevToolsActivePort"
        while time.monotonic() < deadline:
            lines = active.read_text().splitlines() if active.exists() else []
            if len(lines) >= 2:
                return lines[0]
            time.sleep(0.1)
        raise TimeoutError(f"Chromium wrote no {active} within 60 s")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """One CDP command; its result (events that arrive before it are dropped)."""
        assert self._ws is not None, "use Browser in a with block"
        self._next += 1
        self._ws.send(json.dumps({"id": self._next, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv(timeout=60))
            if message.get("id") == self._next:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    def open(self, url: str, width: int = 1280, height: int = 1200) -> None:
        """Load ``url`` in a ``width`` x ``height`` viewport and wait until the document has loaded."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        while self.run("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not finish loading within 30 s")
            time.sleep(0.1)

    def run(self, expression: str) -> Any:
        """Evaluate ``expression`` in the page (promises awaited); its JSON value."""
        answer = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in answer:
            raise RuntimeError(f"the page raised: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        """A PNG of the viewport, written to ``path``."""
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))
        return path
