"""Markdown tables: one checkpoint (per-task table + verdicts) and the history of an experiment."""

from __future__ import annotations

from collections.abc import Sequence

from rlinf_bench.contracts import CheckpointReport, SuiteReport
from rlinf_bench.reporting.format import (
    VERDICT_MARK,
    checkpoint_title,
    interval,
    mean_std,
    pct,
    pvalue,
    verdict_against,
)
from rlinf_bench.reporting.horizon import horizon_section


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def suite_table(suite: SuiteReport) -> str:
    """Per-task success rates over the runs, with the suite's summary as the last row."""
    run_heads = [f"run {r.run_index} (seed {r.seed})" for r in suite.runs]
    lines = [
        _row(["task", *run_heads, "mean ± std", "clustered 95% CI", "Wilson 95% (pooled)"]),
        _row(["---"] * (len(run_heads) + 4)),
    ]
    for t in suite.tasks:
        std = "" if t.success_rate_std is None else f" ± {100 * t.success_rate_std:.1f}"
        lines.append(
            _row(
                [
                    f"{t.task_id}: {t.task_name}",
                    *[pct(x) for x in t.run_success_rates],
                    f"{100 * t.success_rate_mean:.1f}{std}%",
                    interval(t.ci95_low, t.ci95_high),
                    interval(t.wilson95_low, t.wilson95_high),
                ]
            )
        )
    lines.append(
        _row(
            [
                f"**{suite.suite}** ({suite.runs_completed}/{suite.runs_expected} runs, {suite.episodes} episodes)",
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
        _row(["suite", "against", "verdict", "SR", "reference", "diff", "tolerance", "p (below)", "test"]),
        _row(["---"] * 9),
    ]
    for v in report.verdicts:
        diff = "—" if v.difference is None else f"{100 * v.difference:+.1f}"
        lines.append(
            _row(
                [
                    v.suite,
                    verdict_against(v),
                    VERDICT_MARK[v.value],
                    pct(v.estimate),
                    pct(v.reference),
                    diff,
                    f"{100 * v.tolerance:.1f} pts",
                    pvalue(v.p_value),
                    v.test or v.reason,
                ]
            )
        )
    return "\n".join(lines)


def checkpoint_markdown(report: CheckpointReport) -> str:
    """The report of one checkpoint, as logged to MLflow and printed by `rlinf-bench compare`."""
    parts = [f"# {checkpoint_title(report)}", ""]
    parts.append(f"- checkpoint: `{report.checkpoint_uri or '—'}`")
    parts.append(f"- policy: `{report.policy}`; success rate (mean over suites): **{pct(report.success_rate)}**")
    if not report.complete:
        parts.append("- **incomplete**: some runs are missing or failed; no verdict is given on partial data")
    for suite in report.suites:
        parts += ["", f"## {suite.suite}", "", suite_table(suite)]
        if suite.disagreement is not None and suite.disagreement.flagged:
            d = suite.disagreement
            parts += [
                "",
                f"> ⚠ runs disagree beyond binomial noise ({d.test}, p = {pvalue(d.p_value)}): "
                "check for nondeterminism or a faulty node.",
            ]
    parts += horizon_section(report)  # RoboTwin only: the brief's horizon-group table
    parts += ["", "## Verdicts", "", verdict_table(report), ""]
    return "\n".join(parts)


def history_table(reports: Sequence[CheckpointReport], suite: str) -> str:
    """One row per checkpoint for ``suite``, ordered by global step."""
    lines = [
        _row(["global_step", "SR mean ± std", "clustered 95% CI", "Wilson 95%", "runs", "verdicts"]),
        _row(["---"] * 6),
    ]
    for r in sorted(reports, key=lambda x: x.global_step if x.global_step is not None else -1):
        s = r.suite(suite)
        if s is None:
            continue
        verdicts = ", ".join(f"{verdict_against(v)}: {v.value.value}" for v in s.verdicts) or "—"
        lines.append(
            _row(
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
