"""``openpi:ws://host:port`` — a client of openpi's websocket policy server (``serve_policy.py``).

openpi's server (PyPI ``openpi-server``, ``WebsocketPolicyServer``) sends a metadata frame when a
connection opens, then answers one observation per request with ``{"actions": [H, 7], ...}``; on an
exception it sends the traceback as a text frame and closes. Its LIBERO client
(``examples/libero/main.py``) fixes the convention this client follows by default: 256 px renders
rotated 180° and ``resize_with_pad`` to 224, ``observation/state`` = eef position + axis-angle +
gripper qpos, ``prompt`` = the task language, and the first ``replan`` (5) actions of each chunk
executed before asking again (:mod:`eval_runner.policies.conventions`, ``openpi``).

By default (``chunks=runner``) every row of a call gets its ``replan`` actions as a ``[B, replan, 7]``
chunk, which the runner executes open loop (rendering only the observation of the chunk's last step);
with ``chunks=policy`` each episode keeps its own action plan here and asks the server only when the
plan is empty, one action per call. The episodes are the same either way. The requests of one batch
go out concurrently over up to ``connections`` websockets (the server answers one
observation per request per connection). Spec options (after ``?``): ``replan`` (5), ``resize`` (224;
0 = as rendered), ``rotate`` (true), ``wrist`` (true), ``resolution`` (render size, default the
protocol's 256), ``image_key``, ``wrist_key``, ``state_key``, ``prompt_key``, ``api_key`` (sent as
``Authorization: Api-Key …``), ``chunks`` (runner), ``connections`` (8), ``retries`` (8), ``backoff_s`` (0.5),
``max_backoff_s`` (10), ``open_timeout_s`` (5), ``request_timeout_s`` (300).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Unpack

import numpy as np

from eval_runner.policies.base import ACTION_DIM, ObservationSpec, Policy
from eval_runner.policies.checks import batch_size, chunk_executor, runner_executes_chunks
from eval_runner.policies.conventions import (
    MAIN_CAMERA,
    STATE_KEYS,
    WRIST_CAMERA,
    libero_state,
    resize_with_pad,
    rotate_180,
)
from eval_runner.policies.factory import SCHEMES, take_options
from eval_runner.policies.spec import PolicySpec
from eval_runner.policies.websocket_client import CONNECTION_OPTIONS, ConnectionOptions, WebsocketPolicy, server_url
from rlinf_bench.errors import PolicyError, PolicyServerUnreachableError

log = logging.getLogger(__name__)

_CONVENTION_OPTIONS: dict[str, type] = {
    "replan": int,
    "resize": int,
    "rotate": bool,
    "wrist": bool,
    "resolution": int,
    "image_key": str,
    "wrist_key": str,
    "state_key": str,
    "prompt_key": str,
}
_CLIENT_OPTIONS: dict[str, type] = {"chunks": str, "api_key": str, "connections": int, **CONNECTION_OPTIONS}


@dataclass(frozen=True)
class OpenpiConvention:
    """The knobs of openpi's LIBERO client; defaults follow ``examples/libero/main.py``."""

    replan: int = 5
    resize: int = 224
    rotate: bool = True
    wrist: bool = True
    resolution: int | None = None  # None: the run protocol's render resolution (256)
    image_key: str = "observation/image"
    wrist_key: str = "observation/wrist_image"
    state_key: str = "observation/state"
    prompt_key: str = "prompt"

    def check(self, spec: str) -> None:
        if self.replan < 1:
            raise PolicyError(f"policy spec {spec!r}: replan={self.replan} must be >= 1 (actions executed per request)")
        if self.resize < 0 or (self.resolution is not None and not 16 <= self.resolution <= 1024):
            raise PolicyError(f"policy spec {spec!r}: resize must be >= 0 and resolution within 16..1024")

    def image(self, images: np.ndarray) -> np.ndarray:
        """A rendered ``[H, W, 3]`` frame as openpi's client sends it."""
        img = rotate_180(images) if self.rotate else np.ascontiguousarray(images)
        return resize_with_pad(img, self.resize, self.resize) if self.resize else img

    def element(self, obs: dict[str, Any], row: int) -> dict[str, Any]:
        """The request openpi's LIBERO client builds for row ``row`` of a batch."""
        out: dict[str, Any] = {self.image_key: self.image(obs[f"{MAIN_CAMERA}_image"][row])}
        if self.wrist:
            out[self.wrist_key] = self.image(obs[f"{WRIST_CAMERA}_image"][row])
        out[self.state_key] = libero_state({k: obs[k][row] for k in STATE_KEYS})
        out[self.prompt_key] = str(obs["task_description"][row])
        return out


@SCHEMES.register("openpi")
def _load_openpi(spec: PolicySpec, checkpoint_dir: Path | None) -> Policy:
    allowed = {**_CONVENTION_OPTIONS, **_CLIENT_OPTIONS}
    options = take_options(spec, allowed)
    url = server_url(spec, checkpoint_dir, server="openpi server")
    convention = OpenpiConvention(**{k: v for k, v in options.items() if k in _CONVENTION_OPTIONS})
    client = {k: v for k, v in options.items() if k in _CLIENT_OPTIONS}
    return OpenpiPolicy(url, convention=convention, spec=spec.raw, **client)


class OpenpiPolicy(WebsocketPolicy):
    """A Policy whose action chunks come from an openpi websocket policy server."""

    def __init__(
        self,
        url: str,
        *,
        convention: OpenpiConvention | None = None,
        api_key: str | None = None,
        connections: int = 8,
        chunks: str = "runner",
        spec: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        **connection: Unpack[ConnectionOptions],
    ) -> None:
        self.url = url
        self.spec = spec or f"openpi:{url}"
        self.runner_chunks = runner_executes_chunks(chunks, self.spec)
        try:
            import openpi_client.msgpack_numpy  # noqa: F401 - openpi's own wire format, imported early to fail fast
        except ImportError as exc:
            raise PolicyError(
                f"policy spec {self.spec!r} needs openpi's client ({exc}); run pip install 'rlinf-bench[openpi]'"
            ) from exc
        self.convention = convention or OpenpiConvention()
        self.convention.check(self.spec)
        if connections < 1:
            raise PolicyError(f"policy spec {self.spec!r}: connections={connections}; use 1 or more")
        self._start_client(
            url,
            label="openpi server",
            start_hint="start it with openpi's `scripts/serve_policy.py`",
            connection=connection,
            headers={"Authorization": f"Api-Key {api_key}"} if api_key else None,
            sleep=sleep,
        )
        cameras = (MAIN_CAMERA, WRIST_CAMERA) if self.convention.wrist else (MAIN_CAMERA,)
        self.obs_spec = ObservationSpec(cameras=cameras, resolution=self.convention.resolution, proprio=STATE_KEYS)
        self._plans: dict[str, deque[np.ndarray]] = {}
        #: One connection per lane (None until opened, or after it was lost); a lane carries one request at a time.
        self._lanes: list[Any] = [None] * connections
        self._executor: ThreadPoolExecutor | None = None
        self.reconnects = 0
        self._lanes[0] = self._connect()  # fail fast, and learn the server's metadata before the first reset

    # -- connections ----------------------------------------------------------------------------
    def _read_metadata(self, frame: Any) -> dict[str, Any]:
        from openpi_client import msgpack_numpy

        if isinstance(frame, str):
            raise PolicyError(f"openpi server {self.url} sent text instead of its metadata: {frame[:500]}")
        metadata = msgpack_numpy.unpackb(frame)
        return metadata if isinstance(metadata, dict) else {"metadata": metadata}

    def _connect(self) -> Any:
        conn, metadata = self._ws.open()
        if not self.metadata:
            self.metadata = metadata
        return conn

    def _close_lane(self, lane: int) -> None:
        conn, self._lanes[lane] = self._lanes[lane], None
        if conn is not None:
            conn.close()

    def _infer(self, lane: int, element: dict[str, Any]) -> np.ndarray:
        """One request on one lane; a dropped connection is reopened and the request resent once."""
        from openpi_client import msgpack_numpy

        def take() -> Any:
            if self._lanes[lane] is None:
                self._lanes[lane] = self._connect()
            return self._lanes[lane]

        def lost(retrying: bool) -> None:
            self._lanes[lane] = None
            if retrying:
                self.reconnects += 1

        try:
            _, reply = self._ws.exchange(
                take,
                msgpack_numpy.Packer().pack(element),
                what="request",
                lost=lost,
                lost_twice_hint="the finished episodes are kept: restart the server and re-run with --resume",
            )
        except PolicyServerUnreachableError:
            self._lanes[lane] = None  # a timed-out connection was closed: the lane reconnects on its next request
            raise
        if isinstance(reply, str):
            self._close_lane(lane)
            raise PolicyError(f"openpi server {self.url} failed on a request; its traceback:\n{reply}")
        return self._chunk(msgpack_numpy.unpackb(reply))

    def _chunk(self, reply: Any) -> np.ndarray:
        if not isinstance(reply, dict) or "actions" not in reply:
            keys = sorted(reply) if isinstance(reply, dict) else type(reply).__name__
            raise PolicyError(f"openpi server {self.url} replied without 'actions' (got {keys})")
        try:
            chunk = np.asarray(reply["actions"], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise PolicyError(f"openpi server {self.url} returned actions that are not numeric: {exc}") from exc
        need = self.convention.replan
        if chunk.ndim != 2 or chunk.shape[1] != ACTION_DIM or chunk.shape[0] < need:
            raise PolicyError(
                f"openpi server {self.url} returned actions of shape {chunk.shape}; this client needs "
                f"[H, {ACTION_DIM}] with H >= replan={need} (LIBERO's 7-d actions, {need} executed per request)"
            )
        if not np.isfinite(chunk[:need]).all():
            raise PolicyError(f"openpi server {self.url} returned NaN or infinite actions")
        return chunk[:need]

    # -- Policy API -----------------------------------------------------------------------------
    def reset(self, episode_ids: list[str]) -> None:
        for episode_id in episode_ids:
            self._plans[str(episode_id)] = deque()

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        rows = batch_size(obs)
        if self.runner_chunks:  # [B, replan, 7]: the runner executes each row's actions open loop
            elements = [self.convention.element(obs, i) for i in range(rows)]
            return np.stack(self._request_all(elements)).astype(np.float32) if rows else np.zeros((0, 1, ACTION_DIM))
        ids = [str(e) for e in obs["episode_id"]]
        empty = [i for i, e in enumerate(ids) if not self._plans.setdefault(e, deque())]
        if empty:
            elements = [self.convention.element(obs, i) for i in empty]
            for i, chunk in zip(empty, self._request_all(elements), strict=True):
                self._plans[ids[i]].extend(chunk)
        out = np.stack([self._plans[e].popleft() for e in ids]).astype(np.float32)
        if out.shape != (rows, ACTION_DIM):  # pragma: no cover - guaranteed by _chunk
            raise PolicyError(f"openpi client built actions of shape {out.shape} for {rows} rows")
        return out

    def _request_all(self, elements: list[dict[str, Any]]) -> list[np.ndarray]:
        """One request per element, spread over the connections; results in element order."""
        lanes = min(len(elements), len(self._lanes))
        if lanes == 1:
            return [self._infer(0, e) for e in elements]
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=len(self._lanes), thread_name_prefix="openpi")
        groups = [list(range(k, len(elements), lanes)) for k in range(lanes)]

        def run(lane: int) -> list[tuple[int, np.ndarray]]:
            return [(i, self._infer(lane, elements[i])) for i in groups[lane]]

        results: dict[int, np.ndarray] = {}
        for part in self._executor.map(run, range(lanes)):
            results.update(part)
        return [results[i] for i in range(len(elements))]

    def describe(self) -> dict[str, Any]:
        decoding = self.metadata.get("decoding")
        return {
            "class": type(self).__name__,
            "spec": self.spec,
            "url": self.url,
            "server_metadata": _plain(self.metadata),
            "convention": asdict(self.convention),
            "connections": len(self._lanes),
            "chunks_executed_by": chunk_executor(self.runner_chunks),
            # Greedy or sampled is the server's business: we report what its metadata says, if anything.
            "decoding": str(decoding) if decoding else "as served (openpi metadata names none)",
        }

    def close(self) -> None:
        for lane in range(len(self._lanes)):
            self._close_lane(lane)
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None


def _plain(value: Any) -> Any:
    """Metadata as JSON-friendly values (arrays become lists) for the RunResult's provenance."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
