"""Markdown of robustness and failure reasons: what report.md (MLflow's artifact, ``compare``'s output) and the
site's markdown twin say below the verdicts.

Every text from a result file goes through :func:`rlinf_bench.reporting.text_safety.markdown`.
"""

from __future__ import annotations

from rlinf_bench.contracts import CheckpointReport, FailureReason
from rlinf_bench.reporting.format import VERDICT_MARK, mde_text, pct, pvalue, table_row, verdict_note
from rlinf_bench.reporting.robustness_text import (
    REASON_WORDS,
    category_table,
    drop_cells,
    flag_text,
    level_label,
    move_line,
    signed_pts,
)
from rlinf_bench.reporting.text_safety import markdown as md

__all__ = ["reasons_markdown", "robustness_markdown"]


def robustness_markdown(report: CheckpointReport) -> list[str]:
    """Per suite: the flag, each level against its controls, the verdicts per axis; then the category table
    with a row per suite. [] when no suite has robustness."""
    suites = [s for s in report.suites if s.robustness is not None]
    if not suites:
        return []
    lines = ["", "## Robustness"]
    for s in suites:
        section = s.robustness
        assert section is not None
        lines += ["", f"### {md(s.suite)}"]
        if section.flag is not None:
            lines += ["", f"> ⚑ {md(flag_text(section.flag))}"]
        if section.levels:
            heads = ["axis, level", "SR perturbed [95% CI]", "SR control", "perturbed − control [95% CI]", "p (drop)"]
            lines += ["", table_row([*heads, "episodes / states"]), table_row(["---"] * 6)]
            lines += [table_row([md(level_label(r)), *drop_cells(r)]) for r in section.levels]
        if section.verdicts:
            lines += ["", table_row(["axis", "vs", "verdict", "SR now", "before", "diff", "p (below)", "MDE", "test"])]
            lines.append(table_row(["---"] * 9))
            for a in section.verdicts:
                v = a.verdict
                lines.append(
                    table_row(
                        [
                            md(a.axis),
                            md(v.reference_label),
                            VERDICT_MARK[v.value],
                            pct(v.estimate),
                            pct(v.reference),
                            signed_pts(v.difference),
                            pvalue(v.p_value),
                            mde_text(v),
                            md(verdict_note(v)),
                        ]
                    )
                )
    table = category_table([(s.suite, s.robustness) for s in suites if s.robustness is not None], row_heading="suite")
    if table is not None:
        lines += ["", "### Per category (LIBERO-plus's table)", "", table_row(table.headings)]
        lines.append(table_row(["---"] * len(table.headings)))
        lines += [table_row([md(row[0]), *row[1:]]) for row in table.rows]
    return lines


def reasons_markdown(report: CheckpointReport) -> list[str]:
    """Per suite: failures by reason per task, then how they moved against the previous checkpoint."""
    suites = [s for s in report.suites if s.failure_reasons is not None]
    if not suites:
        return []
    lines = ["", "## Why it failed"]
    for s in suites:
        section = s.failure_reasons
        assert section is not None
        seen = {r for t in section.tasks for r in t.counts}
        reasons = [r for r in FailureReason if r in seen]
        lines += ["", f"### {md(s.suite)}", ""]
        lines += [table_row(["task", "failures", *(REASON_WORDS[r] for r in reasons), "no reason"])]
        lines.append(table_row(["---"] * (len(reasons) + 3)))
        for t in section.tasks:
            counts = [t.counts.get(r, 0) for r in reasons]
            lines.append(table_row([f"{t.task_id}: {md(t.task_name)}", t.failures, *counts, t.unlabelled]))
        if section.moves:
            lines += [
                "",
                f"Against {md(section.against)} (bold: moved beyond noise, Holm-corrected α {section.alpha:g}):",
            ]
            for m in section.moves:
                text = md(move_line(m, section.against))
                lines.append(f"- **{text}** (p adjusted {pvalue(m.p_adjusted)})" if m.decisive else f"- {text}")
        elif section.note:
            lines += ["", f"_{md(section.note)}_"]
    return lines
