"""What counts as "the tracking server is unreachable", and the error raised when it stays so.

Only transport failures are retried (connection refused, DNS, timeouts, HTTP 503): a rejected request
(bad parameter, missing run) will fail the same way again and is raised at once. The retry loop itself
is :func:`rlinf_bench.retry.call_with_retry`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from rlinf_bench.errors import TrackingUnavailableError
from rlinf_bench.retry import RetryPolicy, call_with_retry

__all__ = ["TRANSIENT_ERROR_CODES", "RetryPolicy", "call_tracking", "is_unreachable", "unreachable_error"]

T = TypeVar("T")

TRANSIENT_ERROR_CODES = {"TEMPORARILY_UNAVAILABLE", "REQUEST_LIMIT_EXCEEDED"}
_TRANSPORT_ERRORS = {
    "ConnectionError",
    "ConnectTimeout",
    "ReadTimeout",
    "Timeout",
    "MaxRetryError",
    "NewConnectionError",
}


def is_unreachable(exc: BaseException) -> bool:
    """True when ``exc`` (or an exception it was raised from) is a transport failure."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, ConnectionError | TimeoutError):
            return True
        if type(cur).__module__.startswith(("requests", "urllib3")) and type(cur).__name__ in _TRANSPORT_ERRORS:
            return True
        if getattr(cur, "error_code", None) in TRANSIENT_ERROR_CODES:
            return True
        cur = cur.__cause__ or cur.__context__
    return False


def unreachable_error(target: str, what: str) -> Callable[[BaseException, int], BaseException]:
    """The give-up rule for tracking calls: a TrackingUnavailableError naming the server and the check."""

    def give_up(exc: BaseException, attempts: int) -> BaseException:
        return TrackingUnavailableError(
            f"MLflow tracking server {target} unreachable while trying to {what} "
            f"({attempts} attempts): {type(exc).__name__}. Check the tracking URI and that the "
            "server is up (GET <uri>/health)"
        )

    return give_up


def call_tracking(fn: Callable[[], T], *, what: str, target: str, policy: RetryPolicy) -> T:
    """Run ``fn``; retry transport failures with backoff; give up with TrackingUnavailableError."""
    return call_with_retry(
        fn,
        policy=policy,
        retryable=is_unreachable,
        give_up=unreachable_error(target, what),
        what=f"tracking server {target} ({what})",
    )
