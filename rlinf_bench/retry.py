"""The one bounded-retry helper: every call to a server we do not own goes through it.

Tracking (MLflow), the Kubernetes API and policy servers used to carry three loops of their own with
three slightly different backoff rules. They differ only in *what* is worth retrying and in the error
raised when the budget is spent, so those are the parameters; the loop itself is tenacity's.
boto3 calls do not come here: their clients use botocore's ``standard`` retry mode.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

log = logging.getLogger(__name__)
T = TypeVar("T")

__all__ = ["RetryPolicy", "call_with_retry"]


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` in total (the first try included); waits grow ``backoff_s * 2**k`` up to ``max_backoff_s``.

    ``jitter`` spreads the waits of many callers (full jitter: a uniform draw in ``[0, wait]``); leave it
    off where a deterministic schedule matters more (tests, a single caller).
    """

    attempts: int = 4
    backoff_s: float = 1.0
    max_backoff_s: float = 8.0
    jitter: bool = False
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.backoff_s < 0 or self.max_backoff_s < 0:
            raise ValueError(f"retry policy needs attempts >= 1 and backoffs >= 0, got {self}")

    def delay(self, failed_attempt: int) -> float:
        """Seconds to wait after failed attempt ``failed_attempt`` (1-based)."""
        wait = min(self.backoff_s * 2 ** (failed_attempt - 1), self.max_backoff_s)
        return random.uniform(0.0, wait) if self.jitter else wait

    def delays(self) -> list[float]:
        """The waits between the attempts (``attempts - 1`` of them; without jitter, the exact schedule)."""
        return [self.delay(k) for k in range(1, self.attempts)]


def call_with_retry(
    fn: Callable[[], T],
    *,
    policy: RetryPolicy,
    retryable: Callable[[BaseException], bool],
    give_up: Callable[[BaseException, int], BaseException],
    what: str = "call",
) -> T:
    """Call ``fn``; retry failures for which ``retryable`` is true, with ``policy``'s backoff.

    A failure that is not retryable is raised at once, unchanged. When the budget is spent,
    ``give_up(last_exception, attempts)`` builds the error that is raised (from the last exception),
    so each caller keeps its own message naming the server and the fix.
    """

    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            "%s failed (%s: %s); retry %d/%d in %.2fs",
            what,
            type(exc).__name__,
            exc,
            state.attempt_number,
            policy.attempts - 1,
            state.upcoming_sleep,
        )

    retrying = Retrying(
        stop=stop_after_attempt(policy.attempts),
        wait=lambda state: policy.delay(state.attempt_number),
        retry=retry_if_exception(retryable),
        sleep=policy.sleep,
        before_sleep=before_sleep,
        reraise=True,
    )
    try:
        return retrying(fn)
    except Exception as exc:
        if not retryable(exc):
            raise
        raise give_up(exc, policy.attempts) from exc
