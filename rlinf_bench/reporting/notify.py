"""Notification bodies rendered from a CheckpointReport: email plain text and a Slack Block Kit payload.

Sending is someone else's job; these functions only build the content, so they are pure and testable.
Every piece of report text goes through :mod:`rlinf_bench.reporting.text_safety` (plain text for email,
mrkdwn escaping for Slack) and every Slack block through :mod:`rlinf_bench.reporting.message_limits`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.reporting.format import checkpoint_title, headline
from rlinf_bench.reporting.message_limits import SLACK_TEXT_MAX_CHARS, cut, fit_blocks, header, mrkdwn, section
from rlinf_bench.reporting.summary_lines import infra_lines, suite_lines
from rlinf_bench.reporting.text_safety import plain, slack, slack_code, slack_link, slack_plain

__all__ = ["email_subject", "email_text", "full_report_pointer", "report_link", "slack_payload"]

#: The one link of a message, in order of preference: a presigned HTTPS URL of report.html (AWS), the local
#: report.html (the embedded default), then the stored site, JSON or results (rlinf-bench status shows them).
_REPORT_LINKS = ("report_url", "report_site", "report_json", "results")


def report_link(report: CheckpointReport) -> str:
    """The link a person opens: :data:`_REPORT_LINKS`' first that is set ('' when none)."""
    return next((report.links[k] for k in _REPORT_LINKS if report.links.get(k)), "")


def full_report_pointer(report: CheckpointReport) -> str:
    """Where the whole report is, for a message that had to be cut: the link, else how to find it."""
    return report_link(report) or "the stored checkpoint_report.json (rlinf-bench status shows where)"


def email_subject(report: CheckpointReport) -> str:
    return plain(f"[rlinf-bench] {headline(report)}")


def email_text(report: CheckpointReport, problems: Sequence[str] = ()) -> str:
    """Plain text that reads well in any mail client: problems first (failed runs, MLflow), the headline,
    the one link, each suite's SR and verdicts, what changed, the infrastructure checks that matter."""
    title = headline(report)
    lines = [*problems, *([""] if problems else []), title, "=" * min(len(title), 78)]
    link = report_link(report)
    lines.append(f"Report: {link}" if link else "Report: not stored (rlinf-bench status shows the results)")
    lines.append(f"Checkpoint: {report.checkpoint_uri or '-'} (policy {report.policy})")
    if not report.complete:
        lines.append("INCOMPLETE: some runs are missing or failed; verdicts are withheld")
    for s in report.suites:
        lines += ["", *suite_lines(s)]
    infra = infra_lines(report)
    if infra:
        lines += ["", *infra]
    # Line by line: a newline inside a field shows as ⏎ instead of starting a line of its own.
    return "\n".join(plain(line) for line in lines) + "\n"


def _link_text(link: str) -> str:
    # An https URL is clicked; a local path is copied (Slack links no file:// a browser would open).
    return slack_link(link, "Open the report") if "://" in link else f"Report: {slack_code(link)}"


def slack_payload(report: CheckpointReport, problems: Sequence[str] = ()) -> dict[str, Any]:
    """A Slack Block Kit message: header, headline, problems, one section per suite, the infrastructure
    checks that matter, then the one link."""
    pointer = slack(full_report_pointer(report))
    blocks: list[dict[str, Any]] = [
        header(slack_plain(checkpoint_title(report))),
        section(f"*{slack(headline(report))}*\n{slack_code(report.checkpoint_uri)}"),
    ]
    if problems:
        blocks.append(section(":x: " + "\n:x: ".join(slack(p) for p in problems), rest_in=pointer))
    for s in report.suites:
        first, *rest = suite_lines(s)
        text = f"*{slack(first)}*" + "".join(f"\n{slack(line.strip())}" for line in rest)
        blocks.append(section(text, rest_in=pointer))
    infra = infra_lines(report)
    if infra:
        blocks.append(section("\n".join(slack(line.strip()) for line in infra), rest_in=pointer))
    link = report_link(report)
    if link:
        blocks.append({"type": "context", "elements": [mrkdwn(cut(_link_text(link), SLACK_TEXT_MAX_CHARS))]})
    text = cut(slack(headline(report)), SLACK_TEXT_MAX_CHARS)
    return {"text": text, "blocks": fit_blocks(blocks, rest_in=pointer)}
