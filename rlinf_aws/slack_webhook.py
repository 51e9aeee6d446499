"""The Slack notifier: SNS message -> Block Kit payload -> the incoming webhook from Secrets Manager.

The webhook URL is a secret (it lets anyone post to the channel), so it is read from Secrets Manager at
run time and never put in the environment or a log: it is masked (:func:`rlinf_bench.redaction.mask`)
before use, so no error or log line shows it, and a secret that is not an http(s) URL is refused by its
length alone, never handed to urllib (whose error would quote it). A missing or empty secret means Slack
is not set up: that is logged and the message is dropped on purpose (email still went out through SNS). A
webhook that fails is retried; then the error is raised, so Lambda's own retries and then the DLQ keep the
message.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.errors import RlinfBenchError
from rlinf_bench.redaction import mask
from rlinf_bench.retry import RetryPolicy, call_with_retry

log = logging.getLogger(__name__)

__all__ = ["SlackDeliveryError", "SlackMessage", "deliver", "post_webhook"]

Poster = Callable[[str, dict[str, Any]], int]


class SlackDeliveryError(RlinfBenchError):
    """The Slack webhook did not accept the message after bounded retries."""


class SlackMessage(BaseModel):
    """What the publisher puts in the SNS message for Lambda subscribers."""

    model_config = ConfigDict(extra="ignore")

    kind: str = ""
    subject: str = ""
    slack: dict[str, Any] = Field(description="Block Kit payload with 'text' and 'blocks'")


class _HttpError(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:200]}")
        self.status = status


def post_webhook(url: str, payload: dict[str, Any], *, timeout_s: float = 10.0) -> int:
    """POST the payload as JSON; returns the HTTP status, raises _HttpError on a non-2xx answer."""
    data = json.dumps(payload).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        raise _HttpError(exc.code, exc.read().decode(errors="replace")) from exc


def _check_webhook(url: str) -> None:
    """Refuse a webhook secret that is not an http(s) URL with a host, without showing any of it."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        ok = parts.scheme in ("https", "http") and bool(parts.hostname) and not any(c.isspace() for c in url.strip())
    except ValueError:
        ok = False
    if not ok:
        raise SlackDeliveryError(
            f"the Slack webhook secret is not an https:// URL ({len(url)} characters, not shown): store the "
            "channel's incoming-webhook URL (an https address on hooks.slack.com) as the secret's plain-text value"
        )


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, _HttpError):
        return exc.status == 429 or exc.status >= 500
    return isinstance(exc, urllib.error.URLError | TimeoutError | ConnectionError)


def deliver(
    message: SlackMessage,
    webhook_url: str,
    *,
    poster: Poster = post_webhook,
    policy: RetryPolicy | None = None,
) -> bool:
    """Post one message; False when Slack is not configured, raises SlackDeliveryError when it fails."""
    if not webhook_url.strip():
        log.warning("Slack not configured (the webhook secret is missing or empty); message not posted")
        return False
    mask(webhook_url)
    _check_webhook(webhook_url)

    def give_up(exc: BaseException, attempts: int) -> BaseException:
        return SlackDeliveryError(f"Slack webhook failed after {attempts} attempts: {exc}")

    try:
        call_with_retry(
            lambda: poster(webhook_url, message.slack),
            policy=policy or RetryPolicy(attempts=3, backoff_s=1.0, max_backoff_s=4.0),
            retryable=_retryable,
            give_up=give_up,
            what="post to the Slack webhook",
        )
    except _HttpError as exc:  # 4xx: the payload or the webhook is wrong; retrying cannot help
        raise SlackDeliveryError(f"Slack webhook refused the message: {exc}") from exc
    return True
