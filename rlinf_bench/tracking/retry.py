"""Bounded retries for calls to the tracking server.

Only transport failures are retried (connection refused, DNS, timeouts, HTTP 503): a rejected request
(bad parameter, missing run) will fail the same way again and is raised at once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from rlinf_bench.errors import TrackingUnavailableError

log = logging.getLogger(__name__)
T = TypeVar("T")

TRANSIENT_ERROR_CODES = {"TEMPORARILY_UNAVAILABLE", "REQUEST_LIMIT_EXCEEDED"}


@dataclass(frozen=True)
class RetryPolicy:
    """attempts in total, exponential backoff from ``backoff_s`` capped at ``max_backoff_s``."""

    attempts: int = 4
    backoff_s: float = 1.0
    max_backoff_s: float = 8.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    def delays(self) -> list[float]:
        return [min(self.backoff_s * 2**i, self.max_backoff_s) for i in range(self.attempts - 1)]


def is_unreachable(exc: BaseException) -> bool:
    """True when ``exc`` (or an exception it was raised from) is a transport failure."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ConnectionError | TimeoutError):
            return True
        mod = type(cur).__module__
        if mod.startswith(("requests", "urllib3")) and type(cur).__name__ in {
            "ConnectionError",
            "ConnectTimeout",
            "ReadTimeout",
            "Timeout",
            "MaxRetryError",
            "NewConnectionError",
        }:
            return True
        if getattr(cur, "error_code", None) in TRANSIENT_ERROR_CODES:
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def call_with_retry(fn: Callable[[], T], *, what: str, target: str, policy: RetryPolicy) -> T:
    """Run ``fn``; retry transport failures with backoff; give up with TrackingUnavailableError."""
    delays = policy.delays()
    for attempt in range(policy.attempts):
        try:
            return fn()
        except Exception as exc:
            if not is_unreachable(exc):
                raise
            if attempt == policy.attempts - 1:
                raise TrackingUnavailableError(
                    f"MLflow tracking server {target} unreachable while trying to {what} "
                    f"({policy.attempts} attempts): {type(exc).__name__}. Check the tracking URI and that the "
                    "server is up (GET <uri>/health)"
                ) from exc
            log.warning(
                "tracking server %s unreachable (%s), retry %d in %.1fs", target, what, attempt + 1, delays[attempt]
            )
            policy.sleep(delays[attempt])
    raise AssertionError("unreachable")  # pragma: no cover - the loop always returns or raises
