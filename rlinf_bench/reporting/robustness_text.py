"""The words and rows of the robustness section and the failure reasons, shared by every renderer (HTML pages,
markdown, the summary message): one place says "12 more grasp failed on task 3 than at global_step 400".

Plain text, not escaped: each renderer escapes for its sink.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rlinf_bench.contracts import FailureReason, VerdictValue
from rlinf_bench.contracts.robustness_report import (
    CategoryRate,
    PerturbedOutcome,
    ReasonMove,
    RobustnessFlag,
    RobustnessLevel,
    RobustnessSection,
    TaskReasons,
)
from rlinf_bench.reporting.format import pct, pvalue
from rlinf_bench.stats.robustness import TABLE_COLUMNS, category_order

__all__ = [
    "REASON_WORDS",
    "CategoryTable",
    "ReasonRow",
    "axis_heading",
    "category_table",
    "drop_cells",
    "flag_text",
    "level_label",
    "move_line",
    "reason_rows",
    "signed_pts",
]

#: How each reason reads in a sentence ("12 more grasp failed on task 3").
REASON_WORDS: dict[FailureReason, str] = {
    FailureReason.NEVER_REACHED: "never reached",
    FailureReason.GRASP_FAILED: "grasp failed",
    FailureReason.WRONG_OBJECT: "wrong object",
    FailureReason.DROPPED: "dropped",
    FailureReason.WRONG_TARGET: "wrong target",
    FailureReason.KNOCKED_OVER: "knocked over",
    FailureReason.TIMEOUT_HOLDING: "timed out holding",
    FailureReason.UNDONE: "undone",
    FailureReason.TIMEOUT: "timed out",
    FailureReason.ERROR: "simulator error",
}
_HEADINGS = dict(TABLE_COLUMNS)


def axis_heading(category: str) -> str:
    """LIBERO-plus's heading for one of its seven categories (camera -> Camera, texture -> Background); any
    other category (a published suite's own kind) as it is named."""
    return _HEADINGS.get(category, category)


def signed_pts(x: float | None) -> str:
    """A difference of fractions in points: ``+3.1 pts``; '—' when absent."""
    if x is None:
        return "—"
    points = round(100 * x, 1) or 0.0  # no "-0.0": a difference that rounds to nothing has no sign
    return f"{points:+.1f} pts"


def level_label(row: RobustnessLevel | PerturbedOutcome) -> str:
    """``camera level 2 (10 deg)``."""
    return f"{row.axis.value} level {row.level} ({row.magnitude:g} {row.unit})"


def flag_text(flag: RobustnessFlag) -> str:
    """``standard SR rose +3.1 pts vs global_step 400 while camera fell -14.0 pts`` (several axes: ``while camera
    (-14.0 pts), light (-6.0 pts) fell``)."""
    rose = "rose significantly" if flag.sr_verdict == VerdictValue.ABOVE else "rose"
    suites = "" if len(flag.sr_suites) == 1 else f" (mean of {', '.join(flag.sr_suites)})"
    if len(flag.axes) == 1:
        falls = f"{flag.axes[0]} fell {signed_pts(flag.axis_differences.get(flag.axes[0]))}"
    else:
        falls = ", ".join(f"{a} ({signed_pts(flag.axis_differences.get(a))})" for a in flag.axes) + " fell"
    return f"standard SR {rose} {signed_pts(flag.sr_difference)}{suites} vs {flag.against} while {falls}"


def move_line(m: ReasonMove, against: str) -> str:
    """``12 more grasp failed on task 3 (name) than at global_step 400 (4 → 16)``."""
    more = "more" if m.change > 0 else "fewer"
    name = f" ({m.task_name})" if m.task_name else ""
    return f"{abs(m.change)} {more} {REASON_WORDS[m.reason]} on task {m.task_id}{name} than at {against} ({m.before} → {m.now})"


@dataclass(frozen=True)
class CategoryTable:
    """LIBERO-plus's per-category table: one row per model/checkpoint, its seven columns then Total."""

    headings: list[str]  # the row label's heading first
    rows: list[list[str]]


def category_table(
    rows: Sequence[tuple[str, RobustnessSection]], *, row_heading: str = "checkpoint"
) -> CategoryTable | None:
    """One row per (label, source) of ``rows`` (native axes and published variants are rows apart); the seven
    categories always (— where not measured), then any other category, then Total. None without categories."""
    lines: list[tuple[str, dict[str, CategoryRate], CategoryRate | None]] = []
    for label, section in rows:
        sources = sorted({c.source for c in section.categories}, key=lambda s: s != "native")
        for source in sources:
            cats = {c.category: c for c in section.categories if c.source == source}
            total = next((t for t in section.totals if t.source == source), None)
            suffix = " (published variants)" if source == "published" and len(sources) > 1 else ""
            lines.append((label + suffix, cats, total))
    if not lines:
        return None
    extra = category_order(c for _, cats, _ in lines for c in cats if c not in _HEADINGS)
    columns = [name for name, _ in TABLE_COLUMNS] + extra
    out = []
    for label, cats, total in lines:
        cells = [_rate(cats.get(c)) for c in columns]
        out.append([label, *cells, _rate(total)])
    return CategoryTable([row_heading, *(axis_heading(c) for c in columns), "Total"], out)


def _rate(c: CategoryRate | None) -> str:
    return "—" if c is None or not c.episodes else pct(c.success_rate)


def drop_cells(row: RobustnessLevel) -> list[str]:
    """The cells of one level's row: SR (CI), control, drop [CI], p, episodes/clusters."""
    return [
        f"{pct(row.success_rate)} [{pct(row.ci95_low)}, {pct(row.ci95_high)}]",
        pct(row.control_success_rate),
        f"{signed_pts(-row.drop)} [{signed_pts(-row.drop_ci95_high)}, {signed_pts(-row.drop_ci95_low)}]",
        pvalue(row.p_value),
        f"{row.episodes} / {row.clusters}" + (f" (+{row.unpaired} unpaired)" if row.unpaired else ""),
    ]


@dataclass(frozen=True)
class ReasonRow:
    """One reason of one task: now, at the previous checkpoint (when moves were counted), under perturbation."""

    reason: FailureReason
    word: str
    now: int
    before: int | None
    change: int | None
    decisive: bool
    perturbed: int


def reason_rows(task: TaskReasons, moves: Sequence[ReasonMove], compared: bool) -> list[ReasonRow]:
    """Every reason seen now, at the previous checkpoint or under perturbation, in the order of the checks."""
    moved = {m.reason: m for m in moves if m.task_id == task.task_id}
    out = []
    for reason in FailureReason:
        now, perturbed = task.counts.get(reason, 0), task.perturbed.get(reason, 0)
        m = moved.get(reason)
        before = m.before if m is not None else (now if compared else None)
        if not (now or perturbed or before):
            continue
        change = None if before is None else now - before
        decisive = m is not None and m.decisive
        out.append(ReasonRow(reason, REASON_WORDS[reason], now, before, change, decisive, perturbed))
    return out
