"""``server:ws://host:port`` — a client of a remote policy server (protocol in docs/policies.md).

The client connects when it is built, because the environment must know which cameras to render
before the first reset: the server's first message announces its :class:`ObservationSpec`. Each
:meth:`ServerPolicy.act` is exactly one request/reply round trip carrying the whole batch.

Spec options (after ``?``): ``retries`` (default 8), ``backoff_s`` (0.5), ``max_backoff_s`` (10),
``open_timeout_s`` (5), ``request_timeout_s`` (300), ``inflight`` (2). Connection attempts wait
``min(backoff_s * 2**k, max_backoff_s)`` between tries, so the defaults give a starting server
about 45 s to come up before PolicyServerUnreachableError.

``inflight``: how many batches may be on their way at once, each on its own connection (opened when
first needed). The rollout sends the next ready rows while a call is out, so the server can queue or
merge them and its GPU never waits for the network round trip. ``inflight=1`` is one call at a time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Unpack

import numpy as np

from eval_runner.policies.base import ACTION_DIM, ObservationSpec, Policy
from eval_runner.policies.checks import batch_size, check_actions
from eval_runner.policies.factory import SCHEMES, take_options
from eval_runner.policies.spec import PolicySpec
from eval_runner.policies.websocket_client import CONNECTION_OPTIONS, ConnectionOptions, WebsocketPolicy, server_url
from eval_runner.policies.wire import PROTOCOL, PROTOCOL_VERSION, RESET_KEY, WireError, pack, unpack
from rlinf_bench.errors import PolicyError

log = logging.getLogger(__name__)

_OPTIONS: dict[str, type] = {**CONNECTION_OPTIONS, "inflight": int}


@SCHEMES.register("server")
def _load_server(spec: PolicySpec, checkpoint_dir: Path | None) -> Policy:
    options = take_options(spec, _OPTIONS)
    return ServerPolicy(server_url(spec, checkpoint_dir, server="server"), spec=spec.raw, **options)


class ServerPolicy(WebsocketPolicy):
    """A Policy whose ``act`` is answered by a remote policy server over a websocket."""

    def __init__(
        self,
        url: str,
        *,
        inflight: int = 2,
        spec: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        **connection: Unpack[ConnectionOptions],
    ) -> None:
        if inflight < 1:
            raise PolicyError(f"policy spec {spec or url!r}: inflight={inflight}; use 1 or more batches in flight")
        self.url = url
        self.spec = spec or f"server:{url}"
        self._start_client(
            url,
            label="policy server",
            start_hint="start it with `rlinf-bench serve-policy --policy SPEC --host HOST --port PORT`",
            connection=connection,
            sleep=sleep,
        )
        #: batches the rollout may have on their way at once (batching.PolicyCaller reads it)
        self.concurrent_calls = inflight
        self._pending_resets: list[str] = []
        self._lock = threading.Lock()  # guards the idle connections and the pending resets
        self._idle: list[Any] = []  # open connections no call is using
        self._idle.append(self._connect())

    # -- connection -------------------------------------------------------------------------
    def _connect(self) -> Any:
        """Connect with bounded exponential backoff, read the server's metadata message; the connection."""
        conn, (meta, spec) = self._ws.open()
        self.metadata, self.obs_spec = meta, spec
        return conn

    def _read_metadata(self, frame: Any) -> tuple[dict[str, Any], ObservationSpec]:
        meta = self._check_metadata(frame)
        spec = self._spec_from_metadata(meta)
        if self._ws.connects and spec != self.obs_spec:
            # The environments already render for the old spec; mixing would feed the policy wrong inputs.
            raise PolicyError(
                f"policy server {self.url} came back with a different obs_spec ({spec} instead of "
                f"{self.obs_spec}); restart the evaluation against the new server"
            )
        return meta, spec

    def _check_metadata(self, frame: Any) -> dict[str, Any]:
        try:
            meta = unpack(frame)
        except WireError as exc:
            raise PolicyError(f"policy server {self.url} sent an unreadable first message: {exc}") from exc
        if not isinstance(meta, dict) or meta.get("protocol") != PROTOCOL:
            raise PolicyError(
                f"policy server {self.url} does not speak the {PROTOCOL} protocol (its first message has no "
                f"'protocol': {PROTOCOL!r}); serve the policy with `rlinf-bench serve-policy` or implement "
                "the protocol in docs/policies.md"
            )
        version = meta.get("protocol_version")
        if version != PROTOCOL_VERSION:
            raise PolicyError(
                f"policy server {self.url} speaks {PROTOCOL} version {version}, this client speaks "
                f"{PROTOCOL_VERSION}; run matching rlinf-bench versions on both sides"
            )
        if meta.get("action_dim") != ACTION_DIM:
            raise PolicyError(
                f"policy server {self.url} produces {meta.get('action_dim')}-d actions; LIBERO needs {ACTION_DIM}"
            )
        return meta

    def _spec_from_metadata(self, meta: dict[str, Any]) -> ObservationSpec:
        try:
            return ObservationSpec.model_validate(meta.get("obs_spec", {}))
        except Exception as exc:
            raise PolicyError(
                f"policy server {self.url} announced an invalid obs_spec {meta.get('obs_spec')!r}: {exc}"
            ) from exc

    # -- Policy API -------------------------------------------------------------------------
    def reset(self, episode_ids: list[str]) -> None:
        # Sent with the next batch rather than as an extra round trip: one request per vector step.
        with self._lock:
            self._pending_resets.extend(str(e) for e in episode_ids)

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        with self._lock:
            resets, self._pending_resets = self._pending_resets, []
        try:
            return self.act_with_resets(resets, obs)
        except BaseException:
            with self._lock:  # not delivered: they ride with the next batch
                self._pending_resets[:0] = resets
            raise

    def act_with_resets(self, resets: list[str], obs: dict[str, Any]) -> np.ndarray:
        """One request carrying the batch and the episodes that start with it; safe from several threads.

        Resets travel in the request itself, so a reset can never reach the server after the batch it
        belongs to when several batches are in flight.
        """
        rows = batch_size(obs)
        request = dict(obs)
        if resets:
            request[RESET_KEY] = [str(e) for e in resets]
        try:
            frame = pack(request)
        except TypeError as exc:
            raise PolicyError(f"observation batch cannot be sent to {self.url}: {exc}") from exc
        return self._actions_from(self._round_trip(frame), rows)

    def _take(self) -> Any:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._connect()  # after close(), a timed-out request, or a second batch in flight

    def _round_trip(self, frame: bytes) -> Any:
        # A dropped connection: the others went down with the server too; the batch is resent once (safe: a
        # request carries the whole batch and its pending resets).
        conn, answer = self._ws.exchange(
            self._take,
            frame,
            what="batch",
            lost=lambda retrying: self.close(),
            lost_twice_hint="check the server's logs (out of memory? crashed?)",
        )
        with self._lock:
            if len(self._idle) < self.concurrent_calls:
                self._idle.append(conn)
                conn = None
        if conn is not None:
            conn.close()
        return answer

    def _actions_from(self, frame: Any, rows: int) -> np.ndarray:
        try:
            reply = unpack(frame)
        except WireError as exc:
            raise PolicyError(f"policy server {self.url} sent an unreadable reply: {exc}") from exc
        if not isinstance(reply, dict):
            raise PolicyError(f"policy server {self.url} replied with a {type(reply).__name__}, expected a map")
        if "error" in reply:
            raise PolicyError(f"policy server {self.url} failed on this batch: {reply['error']}")
        if "actions" not in reply:
            raise PolicyError(f"policy server {self.url} replied without 'actions' or 'error' (keys: {sorted(reply)})")
        return check_actions(reply["actions"], rows, source=f"policy server {self.url}", chunks=True)

    def describe(self) -> dict[str, Any]:
        return {
            "class": type(self).__name__,
            "spec": self.spec,
            "url": self.url,
            "inflight": self.concurrent_calls,
            "server": self.metadata.get("policy", {}),
            **({"server_batching": self.metadata["batching"]} if "batching" in self.metadata else {}),
        }

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
