"""Notification bodies rendered from a CheckpointReport: email plain text and a Slack Block Kit payload.

Sending is someone else's job; these functions only build the content, so they are pure and testable.
"""

from __future__ import annotations

from typing import Any

from rlinf_bench.contracts import CheckpointReport, SuiteReport
from rlinf_bench.reporting.format import (
    VERDICT_MARK,
    changes_text,
    checkpoint_title,
    headline,
    interval,
    mde_text,
    mean_std,
    pvalue,
    verdict_against,
)
from rlinf_bench.stats.flips import flip_summary

SLACK_TEXT_LIMIT = 3000  # Block Kit section text limit


def email_subject(report: CheckpointReport) -> str:
    return f"[rlinf-bench] {headline(report)}"


def email_text(report: CheckpointReport) -> str:
    """Plain text that reads well in any mail client (no tables wider than 80 columns)."""
    lines = [headline(report), "=" * min(len(headline(report)), 78), ""]
    lines.append(f"Checkpoint: {report.checkpoint_uri or '-'}")
    lines.append(f"Policy:     {report.policy}")
    if not report.complete:
        lines.append("Status:     INCOMPLETE - some runs are missing or failed; verdicts are withheld")
    for s in report.suites:
        lines += ["", f"{s.suite}: {mean_std(s)}  clustered 95% CI {interval(s.ci95_low, s.ci95_high)}"]
        lines.append(
            f"  runs {s.runs_completed}/{s.runs_expected}, {s.episodes} episodes, pooled Wilson {interval(s.wilson95_low, s.wilson95_high)}"
        )
        for r in s.runs:
            if r.status.value != "complete":
                lines.append(f"  run {r.run_index}: {r.status.value} - {r.error or 'no reason given'}")
        if s.disagreement is not None and s.disagreement.flagged:
            lines.append(f"  WARNING: runs disagree beyond binomial noise (p = {pvalue(s.disagreement.p_value)})")
        for v in s.verdicts:
            changed = v.kind != "baseline" and bool(v.environment_changes)
            first = f"environment changed: {changes_text(v)}; " if changed and v.value.value == "below" else ""
            lines.append(
                f"  {VERDICT_MARK[v.value]:<13} vs {verdict_against(v)}: {first}p = {pvalue(v.p_value)}, "
                f"sees drops >= {mde_text(v)} ({v.test or v.reason})"
            )
            if changed and not first:
                lines.append(f"    environment changed: {changes_text(v)}")
        lines += [f"  {line}" for line in _flip_lines(s)]
        lines += [f"  {line}" for line in _task_flags(s)]
    if report.infra:
        lines += ["", "Infrastructure:"]
        for c in report.infra:
            target = f" (target {c.op} {c.target:g})" if c.target is not None else ""
            value = "-" if c.value is None else f"{c.value:g} {c.unit}"
            lines.append(f"  {c.probe}.{c.metric}: {value}{target}: {c.verdict}")
    if report.links:
        lines += ["", "Links:"] + [f"  {k}: {v}" for k, v in sorted(report.links.items())]
    return "\n".join(lines) + "\n"


def _flip_lines(suite: SuiteReport) -> list[str]:
    """The short form of the flipped states: ``task 3 (name): 4 states flipped to failure (vs global_step 100)``."""
    return [f"{line} (vs {suite.flips_against})" for line in flip_summary(suite)]


def _task_flags(suite: SuiteReport) -> list[str]:
    return [
        f"task {t.task_id} ({t.task_name}): runs disagree (Cochran's Q, adjusted p = {pvalue(t.disagreement.p_adjusted)})"
        for t in suite.tasks
        if t.disagreement is not None and t.disagreement.flagged
    ]


def slack_payload(report: CheckpointReport) -> dict[str, Any]:
    """A Slack Block Kit message: header, one section per suite with its verdicts, then links."""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": checkpoint_title(report)[:150]}},
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{headline(report)}*\n`{report.checkpoint_uri}`"}},
    ]
    for s in report.suites:
        text = [
            f"*{s.suite}*: {mean_std(s)} (clustered 95% CI {interval(s.ci95_low, s.ci95_high)}, {s.runs_completed}/{s.runs_expected} runs)"
        ]
        for v in s.verdicts:
            changed = v.kind != "baseline" and bool(v.environment_changes)
            first = f"environment changed: {changes_text(v)}; " if changed and v.value.value == "below" else ""
            text.append(f"{VERDICT_MARK[v.value]} vs {verdict_against(v)}: {first}p = {pvalue(v.p_value)}")
            if changed and not first:
                text.append(f":gear: environment changed: {changes_text(v)}")
        if s.disagreement is not None and s.disagreement.flagged:
            text.append(":warning: runs disagree beyond binomial noise")
        text += [f":arrows_counterclockwise: {line}" for line in _flip_lines(s)]
        text += [f":warning: {line}" for line in _task_flags(s)]
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(text)[:SLACK_TEXT_LIMIT]}})
    if report.infra:
        infra = "\n".join(f"{c.probe}.{c.metric}: {c.value} {c.unit} → {c.verdict}" for c in report.infra)
        blocks.append(
            {"type": "section", "text": {"type": "mrkdwn", "text": f"*Infrastructure*\n{infra}"[:SLACK_TEXT_LIMIT]}}
        )
    if report.links:
        ctx = " | ".join(f"<{v}|{k}>" if "://" in v else f"{k}: {v}" for k, v in sorted(report.links.items()))
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": ctx[:SLACK_TEXT_LIMIT]}]})
    return {"text": headline(report), "blocks": blocks}
