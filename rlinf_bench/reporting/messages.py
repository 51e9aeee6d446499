"""What people receive: the summary (email text + Slack Block Kit) and the failure notice.

One SNS message carries both: email subscribers get the plain text, and the Slack notifier (a Lambda
subscriber) gets a JSON document holding the Block Kit payload (SNS ``MessageStructure='json'``).
User text is escaped for each sink (:mod:`rlinf_bench.reporting.text_safety`) and the message is held to
the SNS, Slack and subject limits (:mod:`rlinf_bench.reporting.message_limits`), cut with a pointer to
where the whole text is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.reporting.message_limits import (
    ERROR_TEXT_MAX_CHARS,
    SNS_MESSAGE_MAX_BYTES,
    SNS_SUBJECT_MAX_CHARS,
    cut,
    cut_at_word,
    cut_bytes,
    fit_blocks,
    header,
    section,
    utf8_len,
)
from rlinf_bench.reporting.text_safety import plain, slack, slack_plain

__all__ = ["Notification", "failure_notification", "sns_message", "subject_line", "summary_notification"]

# Shares of the SNS limit tried in turn when a message is too big: the email text appears twice in the
# JSON message (default and email), the Slack payload once, JSON-quoted.
_EMAIL_SHARES = (None, 0.3, 0.15, 0.05, 0.01)


class Notification(BaseModel):
    """One notification in both forms. ``kind`` tells the outbox and the notifier what it is."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(description="summary | failure")
    subject: str
    text: str
    slack: dict[str, Any]
    full_text_at: str = Field(default="", description="Where the whole content is when a form had to be cut")


def subject_line(text: str) -> str:
    """An SNS subject: one line, no control characters, under SNS's length limit, cut at a word with "…"."""
    return cut_at_word(plain(text), SNS_SUBJECT_MAX_CHARS)


def summary_notification(
    report: CheckpointReport, *, failed_runs: Sequence[str] = (), notes: Sequence[str] = (), mlflow_error: str = ""
) -> Notification:
    """The verdict summary; failed runs, problems met on the way and an MLflow failure are stated first."""
    # Rendering pulls in the statistics (numpy); the failure notifier only needs failure_notification.
    from rlinf_bench.reporting.notify import email_subject, email_text, full_report_pointer, slack_payload

    where = full_report_pointer(report)
    problems: list[str] = []
    if mlflow_error:
        problems.append(f"MLflow publish failed: {cut(mlflow_error, ERROR_TEXT_MAX_CHARS)}")
    problems += [f"Failed: {cut(_one_line(line), ERROR_TEXT_MAX_CHARS, rest_in=where)}" for line in failed_runs]
    problems += [cut(note, ERROR_TEXT_MAX_CHARS, rest_in=where) for note in notes]
    return Notification(
        kind="summary",
        subject=subject_line(email_subject(report)),
        text=email_text(report, problems),
        slack=slack_payload(report, problems),
        full_text_at=where,
    )


#: What a deployed stack's failure notice tells people to run once the cause is fixed.
RERUN_ON_A_STACK = "rlinf-bench trigger --rerun ..."


def failure_notification(
    what: str,
    reason: str,
    *,
    details: Sequence[str] = (),
    links: Sequence[str] = (),
    rest_in: str = "",
    rerun: str = "",
) -> Notification:
    """The evaluation stopped without a verdict: say what failed and why, and what to do next.

    ``rest_in`` names where the whole cause is (the execution's history) when ``reason`` has to be cut;
    ``rerun`` the command to run once it is fixed (on one machine, the user's own; default: :data:`RERUN_ON_A_STACK`).
    """
    subject = subject_line(f"[rlinf-bench] FAILED: {what}")
    why = _no_dangling_tail(cut(reason, ERROR_TEXT_MAX_CHARS, rest_in=rest_in), rest_in)
    first, *log_lines = why.split("\n")
    if log_lines and first.rstrip().endswith(":"):
        first = f"{first.rstrip()} at the end of this message"
    lines = [f"Evaluation failed: {plain(what)}", "", f"Why: {plain(first)}"]
    if details:
        lines += ["", "Details:"] + [f"  - {plain(d)}" for d in details]
    if links:
        lines += ["", "Links:"] + [f"  {plain(link)}" for link in links]
    lines += ["", f"No verdict was published. Fix the cause, then re-run with: {plain(rerun or RERUN_ON_A_STACK)}"]
    # A Job's last log lines keep their lines (each escaped), and the notice ends with them.
    if log_lines:
        lines += ["", "Last log lines:"] + [f"  | {plain(line)}" for line in log_lines]
    text = "\n".join(lines) + "\n"
    blocks: list[dict[str, Any]] = [
        header(slack_plain(f"Evaluation failed: {what}")),
        section(f"*Why:* {slack(first)}", rest_in=slack(rest_in)),
    ]
    if details:
        blocks.append(section("\n".join(f"• {slack(d)}" for d in details), rest_in=slack(rest_in)))
    if log_lines:
        blocks.append(section(slack("\n".join(log_lines), multiline=True), rest_in=slack(rest_in)))
    slack_doc = {"text": slack(subject), "blocks": fit_blocks(blocks, rest_in=slack(rest_in))}
    return Notification(kind="failure", subject=subject, text=text, slack=slack_doc, full_text_at=rest_in)


def _one_line(text: str) -> str:
    """A failure with a log tail, for one line of the summary: the reason (which names the log file) and
    the tail's last line, where the exception usually is; the failure notice keeps every line."""
    first, *rest = text.split("\n")
    last = next((line.strip() for line in reversed(rest) if line.strip()), "")
    return f"{first.rstrip()} … {last}" if last else first


def _no_dangling_tail(text: str, rest_in: str) -> str:
    """A reason that announces log lines and has none gets told where they are (never a bare "last log lines:")."""
    if text.rstrip().lower().endswith(("last log lines:", "last log lines")):
        return f"{text.rstrip()} none captured; the whole cause is in {rest_in or 'the execution history'}"
    return text


def _publish_kwargs(note: Notification, text: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    lambda_doc = json.dumps({"kind": note.kind, "subject": note.subject, "slack": {**note.slack, "blocks": blocks}})
    return {
        "Subject": note.subject,
        "MessageStructure": "json",
        "Message": json.dumps({"default": text, "email": text, "lambda": lambda_doc}, ensure_ascii=False),
        "MessageAttributes": {"kind": {"DataType": "String", "StringValue": note.kind}},
    }


def sns_size(kwargs: dict[str, Any]) -> int:
    """Bytes SNS counts against its limit: message, subject and message attributes (name, type, value)."""
    attributes = sum(
        utf8_len(name) + utf8_len(a["DataType"]) + utf8_len(a["StringValue"])
        for name, a in kwargs["MessageAttributes"].items()
    )
    return utf8_len(kwargs["Message"]) + utf8_len(kwargs["Subject"]) + attributes


def sns_message(note: Notification) -> dict[str, Any]:
    """Keyword arguments for ``sns.publish`` (TopicArn added by the caller): text for email, JSON for Lambda.

    Held under SNS's 256 KiB: when the message is bigger, the email text and the Slack blocks are cut
    (in steps) with a pointer to ``note.full_text_at``.
    """
    where = note.full_text_at or "the stored report"
    blocks = list(note.slack.get("blocks", []))
    for share in _EMAIL_SHARES:
        if share is None:
            kwargs = _publish_kwargs(note, note.text, blocks)
        else:
            budget = int(SNS_MESSAGE_MAX_BYTES * share)
            text = cut_bytes(note.text, budget, rest_in=where)
            kwargs = _publish_kwargs(note, text, fit_blocks(blocks, rest_in=slack(where), max_chars=budget // 4))
        if sns_size(kwargs) <= SNS_MESSAGE_MAX_BYTES:
            return kwargs
    # Only a pathological pointer gets here: send the pointer alone rather than nothing.
    short = cut(f"{note.subject}\nThe message was too large for SNS; it is at {where}", 4096)
    return _publish_kwargs(note, short, [section(slack(short))])
