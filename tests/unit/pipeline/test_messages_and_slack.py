"""What people receive: failures first in the summary; the Slack notifier's retries and its 'not configured'."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from rlinf_aws.slack_webhook import SlackDeliveryError, SlackMessage, _HttpError, deliver
from rlinf_bench.reporting.messages import failure_notification, sns_message, summary_notification
from rlinf_bench.retry import RetryPolicy
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from tests.unit.stats.runfactory import make_run

NO_WAIT = RetryPolicy(attempts=3, sleep=lambda s: None)


def report() -> Any:
    runs = [SourcedRun(f"r{i}", make_run({0: [1, 0, 1]}, run_index=i)) for i in range(3)]
    return aggregate_checkpoint(runs)


def test_the_summary_states_mlflow_failures_and_failed_runs_before_the_numbers() -> None:
    note = summary_notification(report(), failed_runs=["libero_goal run 1: OOMKilled"], mlflow_error="ConnectionError")
    assert note.text.startswith("MLflow publish failed: ConnectionError\nFailed: libero_goal run 1: OOMKilled")
    assert "OOMKilled" in json.dumps(note.slack["blocks"][2])
    assert note.slack["blocks"][0]["type"] == "header"


def test_one_sns_message_carries_the_email_text_and_the_slack_payload() -> None:
    note = failure_notification("exp global_step 7", "ConfigError: unknown suite")
    kw = sns_message(note)
    doc = json.loads(kw["Message"])
    assert kw["MessageStructure"] == "json" and doc["email"] == doc["default"] == note.text
    assert json.loads(doc["lambda"])["slack"]["blocks"]
    assert len(kw["Subject"]) <= 100


def test_slack_not_configured_is_logged_and_not_an_error(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert deliver(SlackMessage(slack={"text": "x", "blocks": []}), "  ") is False
    assert "Slack not configured" in caplog.text


def test_a_flaky_webhook_is_retried_and_a_dead_one_raises_for_the_dlq() -> None:
    calls: list[int] = []

    def flaky(url: str, payload: dict[str, Any]) -> int:
        calls.append(1)
        if len(calls) < 3:
            raise _HttpError(503, "busy")
        return 200

    assert deliver(SlackMessage(slack={"text": "x"}), "https://hooks/x", poster=flaky, policy=NO_WAIT)
    assert len(calls) == 3

    def dead(url: str, payload: dict[str, Any]) -> int:
        raise _HttpError(500, "down")

    with pytest.raises(SlackDeliveryError, match="after 3 attempts"):
        deliver(SlackMessage(slack={"text": "x"}), "https://hooks/x", poster=dead, policy=NO_WAIT)

    def refused(url: str, payload: dict[str, Any]) -> int:
        raise _HttpError(404, "no_service")

    with pytest.raises(SlackDeliveryError, match="refused"):
        deliver(SlackMessage(slack={"text": "x"}), "https://hooks/x", poster=refused, policy=NO_WAIT)


@pytest.mark.parametrize(
    "secret", ["xoxb-1234-not-a-webhook-url-at-all", "hooks.slack.com/services/T0/B0/nOhTtPs", "https:// spaced oUt"]
)
def test_a_webhook_secret_that_is_not_a_url_is_refused_without_showing_it(
    secret: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG), pytest.raises(SlackDeliveryError) as info:
        deliver(SlackMessage(slack={"text": "x"}), secret, policy=NO_WAIT)  # the real poster: nothing is posted
    message = str(info.value)
    assert "not an https:// URL" in message and f"{len(secret)} characters, not shown" in message
    for text in (message, caplog.text):
        assert secret not in text and secret[-5:] not in text


def test_a_failing_webhook_is_named_without_its_secret_path(caplog: pytest.LogCaptureFixture) -> None:
    url = "https://hooks.slack.com/services/T0123/B0456/sEcReTpAtH"

    def refused(target: str, payload: dict[str, Any]) -> int:
        raise _HttpError(404, f"no_service for {target}")  # a server that echoes the URL

    with caplog.at_level(logging.DEBUG), pytest.raises(SlackDeliveryError) as info:
        deliver(SlackMessage(slack={"text": "x"}), url, poster=refused, policy=NO_WAIT)
    assert "sEcReTpAtH" not in str(info.value) and "sEcReTpAtH" not in caplog.text
