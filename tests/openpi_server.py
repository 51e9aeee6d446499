"""openpi's real ``WebsocketPolicyServer`` (PyPI ``openpi-server``) around a small deterministic policy.

Run as a subprocess by the tests: ``python -m tests.openpi_server --port P --record DIR [--mode M]``.
The policy checks the keys, dtypes and shapes of every request as openpi's LIBERO client sends them,
records each request to ``DIR`` (one ``.npz`` per request, in arrival order) and answers a 10-step
action chunk computed from the state alone, so trajectories are reproducible. Modes: ``ok``;
``raise`` (the policy raises: the server sends its traceback); ``bad_shape`` (answers ``[3, 6]``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

CHUNK = 10
IMAGE_SHAPE = (224, 224, 3)
KEYS = {"observation/image", "observation/wrist_image", "observation/state", "prompt"}
METADATA = {"policy": "tests.openpi_server", "chunk": CHUNK, "decoding": "deterministic test policy"}


def chunk_for(state: np.ndarray) -> np.ndarray:
    """A 10-step chunk from the state alone: small, bounded motions that differ per step and per state."""
    steps = np.arange(CHUNK)[:, None]
    actions = np.zeros((CHUNK, 7))
    actions[:, :3] = 0.4 * np.tanh(5 * (state[None, :3] - [[-0.2, 0.0, 1.1]])) * np.cos(0.3 * steps)
    actions[:, 3:6] = 0.05 * np.sin(state[None, 3:6] + 0.2 * steps)
    actions[:, 6] = np.where(steps[:, 0] < 5, -1.0, 1.0)
    return actions


class RecordingPolicy:
    """An openpi ``BasePolicy``: checks and records each request, answers :func:`chunk_for`."""

    def __init__(self, record: Path, mode: str) -> None:
        self.record = record
        self.mode = mode
        self.count = 0

    def infer(self, obs: dict[str, Any]) -> dict[str, Any]:
        if set(obs) != KEYS:
            raise ValueError(f"request keys {sorted(obs)} != {sorted(KEYS)}")
        for key in ("observation/image", "observation/wrist_image"):
            img = obs[key]
            if img.dtype != np.uint8 or img.shape != IMAGE_SHAPE:
                raise ValueError(f"{key}: {img.dtype} {img.shape}, expected uint8 {IMAGE_SHAPE}")
        state = np.asarray(obs["observation/state"])
        if state.shape != (8,) or not np.issubdtype(state.dtype, np.floating):
            raise ValueError(f"observation/state: {state.dtype} {state.shape}, expected float (8,)")
        if not isinstance(obs["prompt"], str) or not obs["prompt"]:
            raise ValueError(f"prompt {obs['prompt']!r} is not a non-empty string")
        np.savez(
            self.record / f"{self.count:06d}.npz",
            image=obs["observation/image"],
            wrist=obs["observation/wrist_image"],
            state=state,
            prompt=np.array(obs["prompt"]),
        )
        self.count += 1
        if self.mode == "raise":
            raise ValueError("boom from the test policy")
        if self.mode == "bad_shape":
            return {"actions": np.zeros((3, 6))}
        return {"actions": chunk_for(state)}

    def reset(self) -> None:
        pass


def main() -> None:
    from openpi_server import WebsocketPolicyServer

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--record", type=Path, required=True)
    parser.add_argument("--mode", default="ok", choices=("ok", "raise", "bad_shape"))
    args = parser.parse_args()
    args.record.mkdir(parents=True, exist_ok=True)
    policy = RecordingPolicy(args.record, args.mode)
    WebsocketPolicyServer(policy, host="127.0.0.1", port=args.port, metadata=METADATA).serve_forever()  # type: ignore[arg-type]


# -- test side ----------------------------------------------------------------------------------------
@dataclass
class ServedPolicy:
    """A running server subprocess: its URL, record folder and process."""

    url: str
    port: int
    record: Path
    process: subprocess.Popen[bytes]

    def requests(self) -> list[dict[str, Any]]:
        """Every recorded request, in arrival order."""
        out = []
        for path in sorted(self.record.glob("*.npz")):
            with np.load(path) as data:
                out.append({k: data[k] for k in data.files})
        return out

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(record: Path, mode: str = "ok", port: int | None = None, timeout_s: float = 60.0) -> ServedPolicy:
    """Start the server and wait for its ``/healthz``."""
    port = port or free_port()
    repo = Path(__file__).resolve().parents[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.openpi_server", "--port", str(port), "--record", str(record), "--mode", mode],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
    )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"openpi test server exited with {process.returncode}")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
            if r.status == 200:
                return ServedPolicy(f"ws://127.0.0.1:{port}", port, record, process)
        time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"openpi test server did not come up on port {port} within {timeout_s}s")


@contextlib.contextmanager
def served(record: Path, mode: str = "ok") -> Iterator[ServedPolicy]:
    server = start_server(record, mode)
    try:
        yield server
    finally:
        server.stop()


if __name__ == "__main__":
    main()
