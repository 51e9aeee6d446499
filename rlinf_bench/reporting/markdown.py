"""Markdown tables: one checkpoint (per-task table + verdicts) and the history of an experiment.

Every text that comes from a result file, a name or a reason goes through
:func:`rlinf_bench.reporting.text_safety.markdown` (or ``markdown_code``): it cannot form a link, an image,
HTML or a table cell, and escape sequences never reach the terminal that ``compare`` prints to.
"""

from __future__ import annotations

from collections.abc import Sequence

from rlinf_bench.contracts import CheckpointReport, SuiteReport
from rlinf_bench.reporting.canary import canary_lines
from rlinf_bench.reporting.format import (
    VERDICT_MARK,
    changes_text,
    checkpoint_title,
    interval,
    mde_text,
    mean_std,
    pct,
    pvalue,
    table_row,
    verdict_against,
    verdict_note,
)
from rlinf_bench.reporting.horizon import horizon_section
from rlinf_bench.reporting.robustness_markdown import reasons_markdown, robustness_markdown
from rlinf_bench.reporting.text_safety import markdown as md
from rlinf_bench.reporting.text_safety import markdown_code, markdown_link
from rlinf_bench.stats.flips import flip_summary


def suite_table(suite: SuiteReport) -> str:
    """Per-task success rates over the runs, with the suite's summary as the last row."""
    run_heads = [f"run {r.run_index} (seed {r.seed})" for r in suite.runs]
    lines = [
        table_row(["task", *run_heads, "mean ± std", "clustered 95% CI", "Wilson 95% (pooled)"]),
        table_row(["---"] * (len(run_heads) + 4)),
    ]
    for t in suite.tasks:
        std = "" if t.success_rate_std is None else f" ± {100 * t.success_rate_std:.1f}"
        lines.append(
            table_row(
                [
                    f"{t.task_id}: {md(t.task_name)}",
                    *[pct(x) for x in t.run_success_rates],
                    f"{100 * t.success_rate_mean:.1f}{std}%",
                    interval(t.ci95_low, t.ci95_high),
                    interval(t.wilson95_low, t.wilson95_high),
                ]
            )
        )
    lines.append(
        table_row(
            [
                f"**{md(suite.suite)}** ({suite.runs_completed}/{suite.runs_expected} runs, {suite.episodes} episodes)",
                *[pct(r.success_rate) if r.success_rate is not None else r.status.value for r in suite.runs],
                f"**{mean_std(suite)}**",
                interval(suite.ci95_low, suite.ci95_high),
                interval(suite.wilson95_low, suite.wilson95_high),
            ]
        )
    )
    return "\n".join(lines)


def verdict_table(report: CheckpointReport) -> str:
    """Every verdict with the test that decided it."""
    if not report.verdicts:
        return "_No verdicts: no baseline selected and no earlier checkpoint found._"
    lines = [
        table_row(
            [
                "suite",
                "against",
                "verdict",
                "SR",
                "reference",
                "diff",
                "tolerance",
                "p (below)",
                "p (above)",
                "MDE (80%)",
                "test",
            ]
        ),
        table_row(["---"] * 11),
    ]
    for v in report.verdicts:
        diff = "—" if v.difference is None else f"{100 * v.difference:+.1f} pts"
        lines.append(
            table_row(
                [
                    md(v.suite),
                    md(verdict_against(v)),
                    VERDICT_MARK[v.value],
                    pct(v.estimate),
                    pct(v.reference),
                    diff,
                    f"{100 * v.tolerance:.1f} pts",
                    pvalue(v.p_value),
                    pvalue(v.p_value_above),
                    mde_text(v),
                    md(verdict_note(v)),
                ]
            )
        )
    return "\n".join(lines)


def checkpoint_markdown(report: CheckpointReport) -> str:
    """The report of one checkpoint, as logged to MLflow and printed by `rlinf-bench compare`."""
    parts = [f"# {md(checkpoint_title(report))}", ""]
    parts.append(f"- checkpoint: {markdown_code(report.checkpoint_uri or '—')}")
    parts.append(
        f"- policy: {markdown_code(report.policy)}; success rate (mean over suites): **{pct(report.success_rate)}**"
    )
    if report.links.get("report_site"):
        parts.append(f"- report site: {markdown_link(report.links['report_site'], 'report site')}")
    if not report.complete:
        parts.append("- **incomplete**: some runs are missing or failed; no verdict is given on partial data")
    for suite in report.suites:
        parts += ["", f"## {md(suite.suite)}", "", suite_table(suite)]
        if suite.adaptive is not None:
            a = suite.adaptive
            parts += ["", f"> adaptive budget: round {a.rounds}/{a.max_rounds}, {a.decision}: {md(a.reason)}"]
        if suite.disagreement is not None and suite.disagreement.flagged:
            d = suite.disagreement
            parts += [
                "",
                f"> ⚠ runs disagree beyond binomial noise ({md(d.test)}, p = {pvalue(d.p_value)}): "
                "check for nondeterminism or a faulty node.",
            ]
    parts += horizon_section(report)  # benchmarks whose tasks group (the brief's horizon table) only
    parts += ["", "## Verdicts", "", verdict_table(report)]
    parts += changes_section(report) + flips_section(report) + task_flags_section(report)
    parts += robustness_markdown(report) + reasons_markdown(report) + [""]
    return "\n".join(parts)


def changes_section(report: CheckpointReport) -> list[str]:
    """What changed besides the weights, next to each verdict against an earlier checkpoint."""
    refs = [v for v in report.verdicts if v.kind in ("previous", "best") and v.value.value != "incomplete"]
    canary = canary_lines(report)
    if not refs and not canary:
        return []
    lines = ["", "## What changed besides the weights", ""]
    lines += [f"- {md(v.suite)} vs {md(verdict_against(v))}: {md(changes_text(v))}" for v in refs]
    lines += [f"{'  ' if line.startswith('  ') else ''}- {md(line.strip())}" for line in canary]
    return lines


def flips_section(report: CheckpointReport) -> list[str]:
    """Initial states that flipped against the previous checkpoint, per suite and task."""
    suites = [s for s in report.suites if s.flips]
    if not suites:
        return []
    lines = ["", "## Flipped initial states", ""]
    for s in suites:
        lines.append(f"- {md(s.suite)} vs {md(s.flips_against)}: " + "; ".join(md(x) for x in flip_summary(s)))
        for f in s.flips:
            lines.append(
                f"  - task {f.task_id} state {f.init_state}: {md(f.before)} → {md(f.now)} ({f.direction.replace('_', ' ')})"
            )
    return lines


def task_flags_section(report: CheckpointReport) -> list[str]:
    """Tasks whose runs disagree beyond binomial noise (Cochran's Q per task, Holm-corrected)."""
    flagged = [(s, t) for s in report.suites for t in s.tasks if t.disagreement is not None and t.disagreement.flagged]
    if not flagged:
        return []
    lines = ["", "## Tasks whose runs disagree", ""]
    for s, t in flagged:
        d = t.disagreement
        assert d is not None
        lines.append(
            f"- {md(s.suite)} task {t.task_id} ({md(t.task_name)}): Q = {d.statistic:.2f}, p = {pvalue(d.p_value)}, "
            f"adjusted p = {pvalue(d.p_adjusted)} ({md(d.correction)})"
        )
    return lines


def history_table(reports: Sequence[CheckpointReport], suite: str) -> str:
    """One row per checkpoint for ``suite``, ordered by global step."""
    lines = [
        table_row(["global_step", "SR mean ± std", "clustered 95% CI", "Wilson 95%", "runs", "verdicts"]),
        table_row(["---"] * 6),
    ]
    for r in sorted(reports, key=lambda x: x.global_step if x.global_step is not None else -1):
        s = r.suite(suite)
        if s is None:
            continue
        verdicts = ", ".join(f"{md(verdict_against(v))}: {v.value.value}" for v in s.verdicts) or "—"
        lines.append(
            table_row(
                [
                    r.global_step,
                    mean_std(s),
                    interval(s.ci95_low, s.ci95_high),
                    interval(s.wilson95_low, s.wilson95_high),
                    f"{s.runs_completed}/{s.runs_expected}",
                    verdicts,
                ]
            )
        )
    return "\n".join(lines)
