"""What people receive: the summary (email text + Slack Block Kit) and the failure notice.

One SNS message carries both: email subscribers get the plain text, and the Slack notifier (a Lambda
subscriber) gets a JSON document holding the Block Kit payload (SNS ``MessageStructure='json'``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.contracts import CheckpointReport

__all__ = ["Notification", "failure_notification", "sns_message", "summary_notification"]

SUBJECT_LIMIT = 100  # SNS Subject
SLACK_TEXT_LIMIT = 3000  # Block Kit section text


class Notification(BaseModel):
    """One notification in both forms. ``kind`` tells the outbox and the notifier what it is."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(description="summary | failure")
    subject: str
    text: str
    slack: dict[str, Any]


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:SLACK_TEXT_LIMIT]}}


def summary_notification(
    report: CheckpointReport, *, failed_runs: Sequence[str] = (), notes: Sequence[str] = (), mlflow_error: str = ""
) -> Notification:
    """The verdict summary; failed runs, problems met on the way and an MLflow failure are stated first."""
    # Rendering pulls in the statistics (numpy); the failure notifier only needs failure_notification.
    from rlinf_bench.reporting.notify import email_subject, email_text, slack_payload

    problems: list[str] = []
    if mlflow_error:
        problems.append(f"MLflow publish failed: {mlflow_error}")
    problems += [f"Failed: {line}" for line in failed_runs]
    problems += list(notes)
    text = email_text(report)
    slack = slack_payload(report)
    if problems:
        text = "\n".join(problems) + "\n\n" + text
        blocks = list(slack["blocks"])
        blocks.insert(2, _section(":x: " + "\n:x: ".join(problems)))
        slack = {**slack, "blocks": blocks}
    return Notification(kind="summary", subject=email_subject(report)[:SUBJECT_LIMIT], text=text, slack=slack)


def failure_notification(
    what: str, reason: str, *, details: Sequence[str] = (), links: Sequence[str] = ()
) -> Notification:
    """The evaluation stopped without a verdict: say what failed and why, and what to do next."""
    subject = f"[rlinf-bench] FAILED: {what}"[:SUBJECT_LIMIT]
    lines = [f"Evaluation failed: {what}", "", f"Why: {reason}"]
    if details:
        lines += ["", "Details:"] + [f"  - {d}" for d in details]
    if links:
        lines += ["", "Links:"] + [f"  {link}" for link in links]
    lines += ["", "No verdict was published. Fix the cause, then re-run with: rlinf-bench trigger --rerun ..."]
    text = "\n".join(lines) + "\n"
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": f"Evaluation failed: {what}"[:150]}},
        _section(f"*Why:* {reason}"),
    ]
    if details:
        blocks.append(_section("\n".join(f"• {d}" for d in details)))
    return Notification(kind="failure", subject=subject, text=text, slack={"text": subject, "blocks": blocks})


def sns_message(note: Notification) -> dict[str, Any]:
    """Keyword arguments for ``sns.publish`` (TopicArn added by the caller): text for email, JSON for Lambda."""
    lambda_doc = json.dumps({"kind": note.kind, "subject": note.subject, "slack": note.slack})
    return {
        "Subject": note.subject,
        "MessageStructure": "json",
        "Message": json.dumps({"default": note.text, "email": note.text, "lambda": lambda_doc}),
        "MessageAttributes": {"kind": {"DataType": "String", "StringValue": note.kind}},
    }
