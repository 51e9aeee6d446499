"""Serve any :class:`Policy` over the websocket protocol of docs/policies.md.

One thread per connection (websockets' sync server) decodes requests and encodes replies; one model
thread calls the policy, so policies need not be thread-safe and one GPU model serves one batch at a
time. The model thread merges the requests queued from every connection into one call
(:mod:`eval_runner.policies.request_batching`), so several requests in flight keep the GPU busy.

A failing batch gets an ``{"error": ...}`` reply and the server keeps serving. When a merged call
fails, each of its requests is run again alone, so the error reaches only the request that caused it.
"""

from __future__ import annotations

import http
import logging
import threading
import time
import traceback
from typing import Any

from eval_runner.policies.base import ACTION_DIM, Policy
from eval_runner.policies.checks import check_actions
from eval_runner.policies.request_batching import PendingRequest, RequestQueue, ServerBatching, merge, split
from eval_runner.policies.wire import (
    HEALTH_PATH,
    PROTOCOL,
    PROTOCOL_VERSION,
    RESET_KEY,
    WireError,
    jsonable,
    pack,
    unpack,
)

log = logging.getLogger(__name__)


class PolicyServer:
    """A websocket policy server; ``port=0`` binds a free port (see :attr:`port`)."""

    def __init__(
        self,
        policy: Policy,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        name: str | None = None,
        batching: ServerBatching | None = None,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        from websockets.sync.server import serve

        self.policy = policy
        self.name = name or type(policy).__name__
        self.batching = batching or ServerBatching()
        self.provenance = provenance or {}  # e.g. the cores the server was given (serve_cli)
        self._counter_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        #: counters a test or an operator can read: act requests answered, error replies, connections
        self.requests = 0
        self.errors = 0
        self.connections = 0
        self.batch_sizes: list[int] = []  # rows per request
        self.call_sizes: list[int] = []  # rows per policy call (requests merged)
        self.call_seconds: list[float] = []  # wall time of each policy call (the forward, for a GPU policy)
        self.call_starts: list[float] = []  # perf_counter at each call's start, for where the model idled
        self.first_call_at: float | None = None  # perf_counter at the first call's start
        self._queue = RequestQueue(self.batching)
        self._model_thread = threading.Thread(target=self._model_loop, name="policy-model", daemon=True)
        self._model_thread.start()
        self._metadata = pack(self.metadata())
        self._server = serve(
            self._handle,
            host,
            port,
            compression=None,
            max_size=None,
            process_request=self._health,
        )
        self.host, self.port = self._server.socket.getsockname()[:2]

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    def metadata(self) -> dict[str, Any]:
        """The first message of every connection: protocol, policy provenance, observation spec."""
        return {
            "protocol": PROTOCOL,
            "protocol_version": PROTOCOL_VERSION,
            "policy": jsonable({"name": self.name, **self.policy.describe()}),
            "obs_spec": self.policy.obs_spec.model_dump(mode="json"),
            "action_dim": ACTION_DIM,
            "batching": jsonable({**self.batching.describe(), **self.provenance}),
        }

    # -- lifecycle --------------------------------------------------------------------------
    def serve_forever(self) -> None:
        """Serve until :meth:`shutdown` (or Ctrl-C in the CLI)."""
        log.info("serving policy %s at %s", self.name, self.url)
        self._server.serve_forever()

    def start(self) -> PolicyServer:
        """Serve in a background thread (tests, notebooks); returns self."""
        self._thread = threading.Thread(target=self._server.serve_forever, name="policy-server", daemon=True)
        self._thread.start()
        return self

    def shutdown(self) -> None:
        self._server.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._queue.put(None)
        self._model_thread.join(timeout=10)

    def __enter__(self) -> PolicyServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # -- protocol ---------------------------------------------------------------------------
    def _health(self, connection: Any, request: Any) -> Any:
        # Plain HTTP GET /healthz for Kubernetes readiness probes; everything else upgrades.
        if request.path == HEALTH_PATH:
            return connection.respond(http.HTTPStatus.OK, "OK\n")
        return None

    def _handle(self, connection: Any) -> None:
        from websockets.exceptions import ConnectionClosed

        with self._counter_lock:
            self.connections += 1
        peer = connection.remote_address
        log.info("client %s connected", peer)
        try:
            connection.send(self._metadata)
            for frame in connection:
                connection.send(pack(self._answer(frame)))
        except ConnectionClosed:
            pass
        finally:
            log.info("client %s disconnected", peer)

    def _answer(self, frame: bytes | str) -> dict[str, Any]:
        """One reply: ``{"actions": [B, 7] or [B, K, 7]}`` or ``{"error": msg}``; never raises for a bad batch."""
        started = time.perf_counter()
        try:
            request = self._decode(frame)
            self._queue.put(request)
            request.done.wait()
            if request.error is not None:
                raise request.error
            actions = request.actions
            if actions is None:
                raise RuntimeError("the model thread finished a request without actions or an error")
        except Exception as exc:
            with self._counter_lock:
                self.errors += 1
            log.error("batch failed: %s\n%s", exc, "".join(traceback.format_exception(exc)))
            return {"error": f"{type(exc).__name__}: {exc}", "error_type": type(exc).__name__}
        with self._counter_lock:
            self.requests += 1
            self.batch_sizes.append(len(actions))
        return {"actions": actions, "infer_ms": (time.perf_counter() - started) * 1000.0}

    @staticmethod
    def _decode(frame: bytes | str) -> PendingRequest:
        request = unpack(frame)
        if not isinstance(request, dict):
            raise WireError(f"a request must be a map (the observation batch), got {type(request).__name__}")
        episode_ids = request.get("episode_id")
        if not isinstance(episode_ids, list):
            raise WireError("a request needs 'episode_id': a list with one id per row of the batch")
        resets = request.pop(RESET_KEY, None) or []
        return PendingRequest(obs=request, resets=[str(e) for e in resets], rows=len(episode_ids))

    # -- the model thread --------------------------------------------------------------------
    def _model_loop(self) -> None:
        while (call := self._queue.next_call()) is not None:
            try:
                self._serve_call(call)
            except BaseException as exc:  # never leave a connection waiting
                for request in call:
                    if not request.done.is_set():
                        request.finish(error=exc)

    def _serve_call(self, call: list[PendingRequest]) -> None:
        resets = [e for request in call for e in request.resets]
        if resets:
            self.policy.reset(resets)
        try:
            actions = self._act(merge(call), sum(r.rows for r in call))
        except Exception as exc:
            if len(call) == 1:
                call[0].finish(error=exc)
                return
            for request in call:  # find the request that fails; the others get their actions
                try:
                    request.finish(actions=self._act(request.obs, request.rows))
                except Exception as alone:
                    request.finish(error=alone)
            return
        for request, rows in zip(call, split(actions, call), strict=True):
            request.finish(actions=rows)

    def _act(self, obs: dict[str, Any], rows: int) -> Any:
        started = time.perf_counter()
        if self.first_call_at is None:
            self.first_call_at = started
        actions = check_actions(self.policy.act(obs), rows, source=f"policy {self.name}", chunks=True)
        with self._counter_lock:
            self.call_sizes.append(rows)
            self.call_starts.append(started)
            self.call_seconds.append(time.perf_counter() - started)
        return actions

    def call_summary(self) -> dict[str, Any]:
        """How far requests were merged, and how busy the model thread was from its first call to now.

        ``model_busy`` is the share of that span spent inside policy calls; ``ms_per_row_by_rows`` is the
        mean call time divided by its rows, for each call size (a GPU policy's forward, under whatever
        else the machine was doing). ``model_busy_by_tenth`` splits that span into ten equal windows
        and gives the busy share of each, so idle time at the start, in the steady state and in the
        last wave can be told apart.
        """
        with self._counter_lock:
            sizes, seconds = list(self.call_sizes), list(self.call_seconds)
            starts = list(self.call_starts)
        summary: dict[str, Any] = {
            "requests": self.requests,
            "errors": self.errors,
            "policy_calls": len(sizes),
            "mean_rows_per_call": round(sum(sizes) / len(sizes), 2) if sizes else 0.0,
            "mean_rows_per_request": round(sum(self.batch_sizes) / max(1, len(self.batch_sizes)), 2),
        }
        if not sizes or self.first_call_at is None:
            return summary
        now = time.perf_counter()
        span = now - self.first_call_at
        by_rows: dict[int, list[float]] = {}
        for rows, secs in zip(sizes, seconds, strict=True):
            by_rows.setdefault(rows, []).append(secs)
        return summary | {
            "model_busy_s": round(sum(seconds), 2),
            "first_call_to_stop_s": round(span, 2),
            "model_busy": round(sum(seconds) / span, 4) if span > 0 else None,
            "model_busy_by_tenth": busy_by_window(starts, seconds, self.first_call_at, now, windows=10),
            "ms_per_row": round(1000 * sum(seconds) / sum(sizes), 2),
            "ms_per_row_by_rows": {
                rows: [len(times), round(1000 * sum(times) / len(times) / rows, 2)]
                for rows, times in sorted(by_rows.items())
            },
        }


def busy_by_window(starts: list[float], seconds: list[float], begin: float, end: float, *, windows: int) -> list[float]:
    """The share of each of ``windows`` equal slices of ``[begin, end]`` covered by the calls ``(start, seconds)``.

    A call that straddles a boundary counts in both slices, in proportion.
    """
    width = (end - begin) / windows
    if width <= 0:
        return []
    busy = [0.0] * windows
    for start, length in zip(starts, seconds, strict=True):
        lo, hi = start, start + length
        first, last = int((lo - begin) // width), int((hi - begin) // width)
        for k in range(max(0, first), min(windows - 1, last) + 1):
            busy[k] += max(0.0, min(hi, begin + (k + 1) * width) - max(lo, begin + k * width))
    return [round(b / width, 3) for b in busy]
