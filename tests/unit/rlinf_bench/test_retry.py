"""The one bounded-retry helper: what is retried, how long it waits, and what the caller sees at the end."""

from __future__ import annotations

import logging

import pytest

from rlinf_bench.retry import RetryPolicy, call_with_retry


class ServerDown(Exception):
    """Stands in for a transport failure."""


class GaveUp(Exception):
    """The caller's own give-up error."""


def _flaky(failures: int, exc: Exception, value: str = "ok"):  # type: ignore[no-untyped-def]
    calls: list[int] = []

    def fn() -> str:
        calls.append(1)
        if len(calls) <= failures:
            raise exc
        return value

    return fn, calls


def _give_up(exc: BaseException, attempts: int) -> BaseException:
    return GaveUp(f"server did not answer after {attempts} attempts ({exc})")


def test_given_a_call_that_recovers_then_its_value_comes_back_after_the_scheduled_waits() -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(attempts=4, backoff_s=0.5, max_backoff_s=8.0, sleep=sleeps.append)
    fn, calls = _flaky(2, ServerDown("refused"))

    result = call_with_retry(fn, policy=policy, retryable=lambda e: isinstance(e, ServerDown), give_up=_give_up)

    assert result == "ok" and len(calls) == 3
    assert sleeps == [0.5, 1.0]


def test_given_a_server_that_stays_down_then_the_callers_error_is_raised_from_the_last_failure() -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(attempts=5, backoff_s=1.0, max_backoff_s=3.0, sleep=sleeps.append)
    last = ServerDown("refused")
    fn, calls = _flaky(99, last)

    with pytest.raises(GaveUp, match=r"after 5 attempts \(refused\)") as err:
        call_with_retry(fn, policy=policy, retryable=lambda e: isinstance(e, ServerDown), give_up=_give_up)

    assert len(calls) == 5
    assert sleeps == [1.0, 2.0, 3.0, 3.0] == policy.delays()  # exponential, capped at max_backoff_s
    assert err.value.__cause__ is last


def test_given_a_failure_that_is_not_retryable_then_it_is_raised_at_once_unchanged() -> None:
    sleeps: list[float] = []
    bad = ValueError("bad parameter")
    fn, calls = _flaky(99, bad)

    with pytest.raises(ValueError, match="bad parameter") as err:
        call_with_retry(
            fn,
            policy=RetryPolicy(sleep=sleeps.append),
            retryable=lambda e: isinstance(e, ServerDown),
            give_up=_give_up,
        )

    assert err.value is bad and len(calls) == 1 and sleeps == []


def test_given_one_attempt_then_nothing_is_retried_and_the_give_up_error_says_so() -> None:
    fn, calls = _flaky(99, ServerDown("down"))
    with pytest.raises(GaveUp, match="after 1 attempts"):
        call_with_retry(fn, policy=RetryPolicy(attempts=1), retryable=lambda e: True, give_up=_give_up)
    assert len(calls) == 1


def test_given_jitter_then_every_wait_stays_within_the_backoff() -> None:
    sleeps: list[float] = []
    policy = RetryPolicy(attempts=6, backoff_s=1.0, max_backoff_s=4.0, jitter=True, sleep=sleeps.append)
    fn, _ = _flaky(99, ServerDown("down"))

    with pytest.raises(GaveUp):
        call_with_retry(fn, policy=policy, retryable=lambda e: True, give_up=_give_up)

    caps = [1.0, 2.0, 4.0, 4.0, 4.0]
    assert len(sleeps) == 5 and all(0.0 <= s <= cap for s, cap in zip(sleeps, caps, strict=True))


def test_given_retries_then_each_is_logged_naming_the_call(caplog: pytest.LogCaptureFixture) -> None:
    fn, _ = _flaky(1, ServerDown("refused"))
    with caplog.at_level(logging.WARNING, logger="rlinf_bench.retry"):
        call_with_retry(
            fn,
            policy=RetryPolicy(sleep=lambda s: None),
            retryable=lambda e: True,
            give_up=_give_up,
            what="tracking server http://mlflow:5000",
        )
    assert "tracking server http://mlflow:5000 failed (ServerDown: refused); retry 1/3 in 1.00s" in caplog.text


@pytest.mark.parametrize("kwargs", [{"attempts": 0}, {"backoff_s": -1.0}, {"max_backoff_s": -0.5}])
def test_given_an_impossible_policy_then_it_is_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="attempts >= 1 and backoffs >= 0"):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]
