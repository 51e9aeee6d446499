"""Notification bodies rendered from a CheckpointReport: email plain text and a Slack Block Kit payload.

Sending is someone else's job; these functions only build the content, so they are pure and testable.
Every piece of report text goes through :mod:`rlinf_bench.reporting.text_safety` (plain text for email,
mrkdwn escaping for Slack) and every Slack block through :mod:`rlinf_bench.reporting.message_limits`.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from rlinf_bench.reporting.message_limits import (
    ERROR_TEXT_MAX_CHARS,
    SLACK_TEXT_MAX_CHARS,
    cut,
    fit_blocks,
    header,
    mrkdwn,
    section,
)
from rlinf_bench.reporting.text_safety import plain, slack, slack_code, slack_link, slack_plain
from rlinf_bench.stats.flips import flip_summary

__all__ = ["email_subject", "email_text", "full_report_pointer", "slack_payload"]

_REPORT_LINKS = ("report_site", "report_json", "results")


def full_report_pointer(report: CheckpointReport) -> str:
    """Where the whole report is, for a message that had to be cut: the site, the JSON or the results."""
    where = next((report.links[k] for k in _REPORT_LINKS if report.links.get(k)), "")
    return where or "the stored checkpoint_report.json (rlinf-bench status shows where)"


def email_subject(report: CheckpointReport) -> str:
    return plain(f"[rlinf-bench] {headline(report)}")


def email_text(report: CheckpointReport, problems: Sequence[str] = ()) -> str:
    """Plain text that reads well in any mail client (no tables wider than 80 columns); ``problems``
    (failed runs, MLflow failures) come first, one line each."""
    title = headline(report)
    lines = [*problems, *([""] if problems else []), title, "=" * min(len(title), 78), ""]
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
                error = cut(r.error or "no reason given", ERROR_TEXT_MAX_CHARS, rest_in=r.source)
                lines.append(f"  run {r.run_index}: {r.status.value} - {error}")
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
    # Line by line: a newline inside a field shows as ⏎ instead of starting a line of its own.
    return "\n".join(plain(line) for line in lines) + "\n"


def _flip_lines(suite: SuiteReport) -> list[str]:
    """The short form of the flipped states: ``task 3 (name): 4 states flipped to failure (vs global_step 100)``."""
    return [f"{line} (vs {suite.flips_against})" for line in flip_summary(suite)]


def _task_flags(suite: SuiteReport) -> list[str]:
    return [
        f"task {t.task_id} ({t.task_name}): runs disagree (Cochran's Q, adjusted p = {pvalue(t.disagreement.p_adjusted)})"
        for t in suite.tasks
        if t.disagreement is not None and t.disagreement.flagged
    ]


def _suite_lines(s: SuiteReport) -> list[str]:
    """One suite's mrkdwn lines; every line escaped (the only markup of ours is the bold suite name)."""
    lines = [
        f"*{slack(s.suite)}*: "
        + slack(
            f"{mean_std(s)} (clustered 95% CI {interval(s.ci95_low, s.ci95_high)}, "
            f"{s.runs_completed}/{s.runs_expected} runs)"
        )
    ]
    for v in s.verdicts:
        changed = v.kind != "baseline" and bool(v.environment_changes)
        first = f"environment changed: {changes_text(v)}; " if changed and v.value.value == "below" else ""
        lines.append(slack(f"{VERDICT_MARK[v.value]} vs {verdict_against(v)}: {first}p = {pvalue(v.p_value)}"))
        if changed and not first:
            lines.append(":gear: " + slack(f"environment changed: {changes_text(v)}"))
    if s.disagreement is not None and s.disagreement.flagged:
        lines.append(":warning: runs disagree beyond binomial noise")
    lines += [":arrows_counterclockwise: " + slack(line) for line in _flip_lines(s)]
    lines += [":warning: " + slack(line) for line in _task_flags(s)]
    return lines


def _link(key: str, value: str) -> str:
    # Only the URIs the aggregator wrote (results, report files, the site) become links.
    return slack_link(value, key) if "://" in value else slack(f"{key}: {value}")


def _links_text(links: dict[str, str]) -> str:
    """The links, as many whole ones as fit in a context element (a cut link would leave a stray ``<``)."""
    parts: list[str] = []
    for key, value in sorted(links.items()):
        part = _link(key, value)
        if len(" | ".join([*parts, part])) > SLACK_TEXT_MAX_CHARS:
            break
        parts.append(part)
    return " | ".join(parts) or slack(cut(", ".join(sorted(links)), SLACK_TEXT_MAX_CHARS))


def slack_payload(report: CheckpointReport, problems: Sequence[str] = ()) -> dict[str, Any]:
    """A Slack Block Kit message: header, the problems, one section per suite with its verdicts, then links."""
    pointer = slack(full_report_pointer(report))
    blocks: list[dict[str, Any]] = [
        header(slack_plain(checkpoint_title(report))),
        section(f"*{slack(headline(report))}*\n{slack_code(report.checkpoint_uri)}"),
    ]
    if problems:
        blocks.append(section(":x: " + "\n:x: ".join(slack(p) for p in problems), rest_in=pointer))
    blocks += [section("\n".join(_suite_lines(s)), rest_in=pointer) for s in report.suites]
    if report.infra:
        infra = "\n".join(slack(f"{c.probe}.{c.metric}: {c.value} {c.unit} → {c.verdict}") for c in report.infra)
        blocks.append(section(f"*Infrastructure*\n{infra}", rest_in=pointer))
    if report.links:
        blocks.append({"type": "context", "elements": [mrkdwn(_links_text(report.links))]})
    text = cut(slack(headline(report)), SLACK_TEXT_MAX_CHARS)
    return {"text": text, "blocks": fit_blocks(blocks, rest_in=pointer)}
