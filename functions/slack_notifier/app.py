"""slack_notifier Lambda: subscribed to the results topic; posts each message's Block Kit payload to Slack.

The webhook URL is read from Secrets Manager (SLACK_WEBHOOK_SECRET_ARN) on each cold start and cached
for the container. Logic: rlinf_aws.slack_webhook.
"""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.parser.models import SnsModel
from aws_lambda_powertools.utilities.typing import LambdaContext

from rlinf_aws.clients import boto_client, read_secret
from rlinf_aws.slack_webhook import SlackMessage, deliver

logger = Logger()
SECRET_ARN = os.environ.get("SLACK_WEBHOOK_SECRET_ARN", "")
_webhook: list[str] = []


def webhook_url() -> str:
    """The webhook from the secret; '' when no secret is configured or it cannot be read (logged)."""
    if not _webhook:
        url = ""
        if SECRET_ARN:
            try:
                url = read_secret(boto_client("secretsmanager"), SECRET_ARN).strip()
            except Exception as exc:  # a missing secret means "Slack not configured", not a failure
                logger.warning("Slack webhook secret unreadable", extra={"error": f"{type(exc).__name__}: {exc}"})
        _webhook.append(url)
    return _webhook[0]


@logger.inject_lambda_context
@event_parser(model=SnsModel)
def lambda_handler(event: SnsModel, context: LambdaContext) -> dict[str, Any]:
    posted = 0
    for record in event.Records:
        message = SlackMessage.model_validate_json(record.Sns.Message)
        if deliver(message, webhook_url()):
            posted += 1
    return {"posted": posted, "records": len(event.Records)}
