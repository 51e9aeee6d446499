"""Task-group tables in Markdown (the brief's horizon table): our success rate per group next to the published."""

from __future__ import annotations

from collections.abc import Sequence

from rlinf_bench.baselines import get_baseline
from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.reporting.text_safety import markdown as md
from rlinf_bench.stats.groups import GroupRow, group_tables

__all__ = ["horizon_markdown", "horizon_section"]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _ours(row: GroupRow) -> str:
    if row.mean is None:
        return "incomplete"
    text = f"{100 * row.mean:.1f}"
    if row.std is not None:
        text += f" ± {100 * row.std:.1f}"
    return text + ("" if row.complete else " (partial)")


def horizon_markdown(
    rows: Sequence[GroupRow], baselines: Sequence[str] | None = None, *, dimension: str = "horizon"
) -> str:
    """A Markdown table: group, tasks, runs, our SR (mean ± std over runs, %), each baseline and our delta.

    A row whose runs miss some of its tasks says which, and gets no delta: comparing a subset of a
    group with the source's group average would compare different tasks.
    """
    names = list(baselines) if baselines is not None else sorted({n for r in rows for n in r.baselines})
    header = [dimension, "tasks", "runs", "ours (SR %)"]
    for name in names:
        header += [md(f"{get_baseline(name).model} ({name})"), "Δ pp"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    notes = []
    for row in rows:
        cells = [md(row.label), str(len(row.tasks)), str(len(row.run_rates)), _ours(row)]
        for name in names:
            delta = row.delta(name)
            cells += [_pct(row.baselines.get(name)), "—" if delta is None else f"{delta:+.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
        for run_index, absent in sorted(row.missing.items()):
            notes.append(f"- {md(row.label)}: run {run_index} lacks {md(', '.join(absent))}")
    if notes:
        lines += ["", "Rows without a delta are missing tasks in some runs:", *notes]
    return "\n".join(lines)


def horizon_section(report: CheckpointReport) -> list[str]:
    """Markdown lines of the task-group sections of a checkpoint report; none without grouped suites."""
    lines: list[str] = []
    for grouping, rows in group_tables(report):
        lines += ["", f"## {grouping.title}", "", horizon_markdown(rows, dimension=grouping.dimension)]
    return lines
