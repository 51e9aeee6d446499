"""The policy server's batching: requests from every connection merged into one policy call.

Connection threads decode each request (off the model's thread) and queue it. The model thread takes
the oldest request, then every further request that is already queued or arrives within ``window_ms``,
up to ``max_batch`` rows, and calls the policy once on all their rows; each request gets its own rows'
actions back. With several requests in flight (``server:…?inflight=2``, or several evaluation
processes) the next batch is waiting when a forward ends, so the GPU does not idle through a round trip.

Requests are merged only when their arrays agree in every key, dtype and trailing shape; a request that
does not is served in a later call. An episode's rows never share a call with another of its own rows
(a worker has at most one row out), and a request's resets are applied before the call its rows are in.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ServerBatching:
    """How the server gathers requests into one policy call."""

    max_batch: int | None = None  # rows per policy call (None: no cap)
    window_ms: float = 0.0  # after the first request, wait this long for more (0: only what is queued)

    def describe(self) -> dict[str, Any]:
        return {"max_batch": self.max_batch, "window_ms": self.window_ms}


@dataclass
class PendingRequest:
    """One decoded request, waiting for its actions (or the error of the call it was in)."""

    obs: dict[str, Any]
    resets: list[str]
    rows: int
    done: threading.Event = field(default_factory=threading.Event)
    actions: np.ndarray | None = None
    error: BaseException | None = None

    def signature(self) -> tuple[Any, ...]:
        """What must agree for two requests to share a call: keys, and each array's dtype and row shape."""
        return tuple(
            sorted(
                (k, v.dtype.str, v.shape[1:]) if isinstance(v, np.ndarray) else (k, "list", ())
                for k, v in self.obs.items()
            )
        )

    def finish(self, actions: np.ndarray | None = None, error: BaseException | None = None) -> None:
        self.actions, self.error = actions, error
        self.done.set()


def merge(requests: list[PendingRequest]) -> dict[str, Any]:
    """The observation batch of all ``requests``' rows, in order (arrays concatenated, lists joined)."""
    if len(requests) == 1:
        return requests[0].obs
    merged: dict[str, Any] = {}
    for key, first in requests[0].obs.items():
        values = [r.obs[key] for r in requests]
        merged[key] = np.concatenate(values) if isinstance(first, np.ndarray) else [x for v in values for x in v]
    return merged


def split(actions: np.ndarray, requests: list[PendingRequest]) -> list[np.ndarray]:
    """Each request's rows of a merged call's actions."""
    bounds = np.cumsum([r.rows for r in requests])[:-1]
    return list(np.split(actions, bounds))


class RequestQueue:
    """Requests waiting for the model thread, gathered into calls by :class:`ServerBatching`."""

    def __init__(self, batching: ServerBatching) -> None:
        self.batching = batching
        self._queue: queue.SimpleQueue[PendingRequest | None] = queue.SimpleQueue()
        self._held: list[PendingRequest] = []  # taken but not mergeable with the last call: served first next

    def put(self, request: PendingRequest | None) -> None:
        """Queue a request (``None`` stops the model thread once the requests before it are served)."""
        self._queue.put(request)

    def next_call(self) -> list[PendingRequest] | None:
        """Block for the next call's requests; None once stopped."""
        first = self._held.pop(0) if self._held else self._queue.get()
        if first is None:
            return None
        call, rows, cap = [first], first.rows, self.batching.max_batch
        deadline = time.monotonic() + self.batching.window_ms / 1000.0
        while cap is None or rows < cap:
            nxt = self._take(deadline)
            if nxt is None:
                break
            if nxt.signature() != first.signature() or (cap is not None and rows + nxt.rows > cap):
                self._held.append(nxt)
                break
            call.append(nxt)
            rows += nxt.rows
        return call

    def _take(self, deadline: float) -> PendingRequest | None:
        if self._held:
            return None  # a held request goes first next time; do not overtake it
        try:
            wait = deadline - time.monotonic()
            item = self._queue.get(timeout=wait) if wait > 0 else self._queue.get_nowait()
        except queue.Empty:
            return None
        if item is None:
            self._queue.put(None)  # stop after this call
        return item
