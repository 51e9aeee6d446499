"""The one websocket client of the policy servers the runner talks to (``server:`` and ``openpi:`` specs).

Both servers speak the same way on the socket, whatever their wire format: a connection opens with one
metadata frame from the server, then each request gets one reply. This module holds what that costs to do
well, once: connecting with bounded exponential backoff (a server may still be starting), reading the
metadata frame within the open timeout, a reply timeout that drops the connection (a late reply would be
read as the next request's), and one resend on a fresh connection after a dropped one. Each scheme keeps
its wire format (how the metadata and the replies are read) and how it pools its connections.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypedDict, TypeVar

from eval_runner.policies.base import Policy
from eval_runner.policies.spec import PolicySpec
from rlinf_bench.errors import PolicyError, PolicyServerUnreachableError
from rlinf_bench.retry import RetryPolicy, call_with_retry

__all__ = [
    "CONNECTION_OPTIONS",
    "ConnectionOptions",
    "ConnectionSettings",
    "WebsocketClient",
    "WebsocketPolicy",
    "server_url",
]

log = logging.getLogger(__name__)


def server_url(spec: PolicySpec, checkpoint_dir: Path | None, *, server: str) -> str:
    """The ``ws://`` or ``wss://`` URL of a policy served elsewhere (``server`` names it in messages: ``openpi
    server``); a checkpoint given with it is not read, and the log says so (the server loaded its own weights)."""
    if not spec.target.startswith(("ws://", "wss://")):
        raise PolicyError(f"policy spec {spec.raw!r}: the {server} URL must start with ws:// or wss://")
    if checkpoint_dir is not None:
        log.info(
            "%s policy %s ignores --checkpoint %s: the server loaded its own weights",
            server,
            spec.target,
            checkpoint_dir,
        )
    return spec.target


Metadata = TypeVar("Metadata")

#: The spec options (after ``?``) of every websocket policy scheme, with their types.
CONNECTION_OPTIONS: dict[str, type] = {
    "retries": int,
    "backoff_s": float,
    "max_backoff_s": float,
    "open_timeout_s": float,
    "request_timeout_s": float,
}


class ConnectionOptions(TypedDict, total=False):
    """The connection settings a websocket policy takes as keyword arguments (:class:`ConnectionSettings`)."""

    retries: int
    backoff_s: float
    max_backoff_s: float
    open_timeout_s: float
    request_timeout_s: float


@dataclass(frozen=True, kw_only=True)
class ConnectionSettings:
    """How hard to try: connection attempts ``retries + 1``, waiting ``min(backoff_s * 2**k, max_backoff_s)``
    between them (the defaults give a starting server about 45 s), and the open and reply timeouts."""

    retries: int = 8
    backoff_s: float = 0.5
    max_backoff_s: float = 10.0
    open_timeout_s: float = 5.0
    request_timeout_s: float = 300.0

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> ConnectionSettings:
        """The settings among a spec's parsed options (the others are left to the scheme)."""
        return cls(**{k: v for k, v in options.items() if k in CONNECTION_OPTIONS})

    def check(self, spec: str) -> None:
        if self.retries < 0 or self.backoff_s < 0 or self.max_backoff_s < 0:
            raise PolicyError(f"policy spec {spec!r}: retries and backoff must be >= 0")
        if self.open_timeout_s <= 0 or self.request_timeout_s <= 0:
            raise PolicyError(f"policy spec {spec!r}: open_timeout_s and request_timeout_s must be > 0")


class WebsocketClient(Generic[Metadata]):
    """Opens connections to one server and makes one request/reply exchange on them; safe from several threads.

    ``label`` names the server in errors ("policy server"), ``start_hint`` says how to start one, and
    ``read_metadata`` turns the server's first frame into the scheme's metadata, raising
    :class:`PolicyError` for a server that cannot be used (not retried).
    """

    def __init__(
        self,
        url: str,
        *,
        label: str,
        start_hint: str,
        read_metadata: Callable[[Any], Metadata],
        settings: ConnectionSettings,
        spec: str,
        headers: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        settings.check(spec)
        self.url = url
        self.label = label
        self.settings = settings
        self.retry_policy = RetryPolicy(
            attempts=settings.retries + 1,
            backoff_s=settings.backoff_s,
            max_backoff_s=settings.max_backoff_s,
            sleep=sleep,
        )
        self._start_hint = start_hint
        self._read_metadata = read_metadata
        self._headers = dict(headers) if headers else None
        self._lock = threading.Lock()
        self.connects = 0
        self.requests = 0

    def open(self) -> tuple[Any, Metadata]:
        """A new connection and the server's metadata, retried with backoff while the server does not answer."""
        from websockets.exceptions import InvalidURI

        def attempt() -> tuple[Any, Metadata]:
            try:
                return self._open_once()
            except InvalidURI as exc:
                raise PolicyError(f"{self.label} URL {self.url!r} is not a valid websocket URI: {exc}") from exc

        def give_up(last: BaseException, attempts: int) -> BaseException:
            return PolicyServerUnreachableError(
                f"{self.label} {self.url} did not answer after {attempts} attempts over "
                f"{sum(self.retry_policy.delays()):.1f}s (last error: {type(last).__name__}: {last}); "
                f"{self._start_hint}, check the host/port and firewall, or give it longer to start with "
                "?retries=N&max_backoff_s=S"
            )

        # Refused, DNS, timeout, handshake rejected, closed during metadata: the server may still be starting.
        opened = call_with_retry(
            attempt,
            policy=self.retry_policy,
            retryable=lambda exc: isinstance(exc, Exception) and not isinstance(exc, PolicyError),
            give_up=give_up,
            what=f"{self.label} {self.url}",
        )
        with self._lock:
            self.connects += 1
        return opened

    def _open_once(self) -> tuple[Any, Metadata]:
        from websockets.sync.client import connect

        conn = connect(
            self.url,
            open_timeout=self.settings.open_timeout_s,
            compression=None,  # images are incompressible enough; deflate would cost CPU on both ends
            max_size=None,
            additional_headers=self._headers,
            proxy=None,  # a policy server is on the cluster network, never behind an HTTP proxy
        )
        try:
            metadata = self._read_metadata(conn.recv(timeout=self.settings.open_timeout_s))
        except BaseException:
            conn.close()
            raise
        return conn, metadata

    def exchange(
        self,
        take: Callable[[], Any],
        frame: bytes,
        *,
        what: str,
        lost: Callable[[bool], None],
        lost_twice_hint: str,
    ) -> tuple[Any, Any]:
        """Send ``frame`` (one ``what``: "batch", "request") on the connection ``take()`` gives and wait for the
        reply: (connection, reply).

        A reply later than the request timeout drops the connection and fails. A dropped connection is closed,
        ``lost(retrying)`` told, and the frame resent once on the connection ``take()`` gives next (resending
        is safe: a request carries all it needs); a second drop fails, ending with ``lost_twice_hint``.
        """
        from websockets.exceptions import ConnectionClosed

        for attempt in range(2):
            conn = take()
            try:
                conn.send(frame)
                reply = conn.recv(timeout=self.settings.request_timeout_s)
            except TimeoutError as exc:
                conn.close()  # the late reply would otherwise be read as the answer to the next request
                raise PolicyServerUnreachableError(
                    f"{self.label} {self.url} did not answer a {what} within {self.settings.request_timeout_s}s; raise "
                    "?request_timeout_s=S if inference is that slow, or check the server's logs"
                ) from exc
            except (ConnectionClosed, OSError) as exc:
                conn.close()
                retrying = attempt == 0
                lost(retrying)
                if not retrying:
                    raise PolicyServerUnreachableError(
                        f"{self.label} {self.url} closed the connection twice on the same {what} "
                        f"({exc}); {lost_twice_hint}"
                    ) from exc
                log.warning("%s %s connection lost (%s); reconnecting once", self.label, self.url, exc)
                continue
            with self._lock:
                self.requests += 1
            return conn, reply
        raise AssertionError("unreachable")  # pragma: no cover


class WebsocketPolicy(Policy):
    """Base of the policies a server answers over websockets: the one client, the server's metadata, and what
    the client counted (connections opened, requests answered). A scheme reads the server's first frame in
    :meth:`_read_metadata` and speaks its wire format over :meth:`WebsocketClient.exchange`."""

    url: str
    spec: str
    metadata: dict[str, Any]
    retry_policy: RetryPolicy
    _ws: WebsocketClient[Any]

    def _start_client(
        self,
        url: str,
        *,
        label: str,
        start_hint: str,
        connection: ConnectionOptions,
        headers: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.metadata = {}
        self._ws = WebsocketClient(
            url,
            label=label,
            start_hint=start_hint,
            read_metadata=self._read_metadata,
            settings=ConnectionSettings(**connection),
            spec=self.spec,
            headers=headers,
            sleep=sleep,
        )
        self.retry_policy = self._ws.retry_policy

    @abstractmethod
    def _read_metadata(self, frame: Any) -> Any:
        """The server's first frame as this scheme's metadata; :class:`PolicyError` for a server it cannot use."""

    @property
    def connects(self) -> int:
        """Connections opened so far (a reconnect after a lost connection counts)."""
        return self._ws.connects

    @property
    def requests(self) -> int:
        """Requests (batches or observations) answered so far."""
        return self._ws.requests
