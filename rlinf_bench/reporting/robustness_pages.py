"""What the report site's pages show of robustness and failure reasons: the suite page's section (levels with
their controls and a recorded perturbed episode of each, the curve per axis, the verdicts per axis, the category
table over the checkpoints), the task page's reasons beside its videos, one video per reason, and its perturbed
episodes' videos.

Only the templates' context is built here; :mod:`rlinf_bench.reporting.pages` writes the pages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rlinf_bench.contracts import CheckpointReport, FailureReason, SuiteReport
from rlinf_bench.reporting.format import checkpoint_title
from rlinf_bench.reporting.plot import robustness_curves_png
from rlinf_bench.reporting.robustness_text import (
    REASON_WORDS,
    category_table,
    drop_cells,
    flag_text,
    level_label,
    move_line,
    reason_rows,
)

__all__ = [
    "VideoLink",
    "checkpoint_robustness",
    "perturbed_players",
    "reasons_players",
    "suite_reasons",
    "suite_robustness",
    "task_reasons",
]

#: (run index, the video as the run named it) -> the page's link to its copy, or None when there is none
VideoLink = Callable[[int, str], str | None]


def _step(r: CheckpointReport) -> int:
    return r.global_step if r.global_step is not None else -1


def checkpoint_robustness(report: CheckpointReport) -> dict[str, Any] | None:
    """The checkpoint page's summary: the category table with a row per suite, each suite's flag and verdicts
    per axis (the levels and curves are on the suite pages); None when no suite has robustness."""
    suites = [s for s in report.suites if s.robustness is not None]
    if not suites:
        return None
    return {
        "table": category_table(
            [(s.suite, s.robustness) for s in suites if s.robustness is not None], row_heading="suite"
        ),
        "suites": [
            {
                "suite": s.suite,
                "flag": flag_text(s.robustness.flag) if s.robustness.flag else "",
                "verdicts": s.robustness.verdicts,
            }
            for s in suites
            if s.robustness is not None
        ],
    }


def suite_robustness(
    report: CheckpointReport,
    suite: SuiteReport,
    reports: Sequence[CheckpointReport],
    players: Sequence[dict[str, Any]] = (),
) -> tuple[dict[str, Any], bytes | None] | None:
    """The suite page's robustness context and its curve (PNG bytes, None without native levels); None when
    the suite has no robustness section. The category table's rows are this suite at every checkpoint up to
    this one, oldest first (LIBERO-plus's table, a row per model). Each level's row links the first of
    ``players`` (:func:`perturbed_players`) played at that level: a failure when one was recorded."""
    section = suite.robustness
    if section is None:
        return None
    earlier = {r.checkpoint_uri: r for r in reports if _step(r) < _step(report)}
    rows = [
        (checkpoint_title(r), s.robustness)
        for r in [*sorted(earlier.values(), key=_step), report]
        if (s := r.suite(suite.suite)) is not None and s.robustness is not None
    ]
    curve = (
        robustness_curves_png(section.levels, title=f"{suite.suite}: success rate under perturbation")
        if section.levels
        else None
    )
    context = {
        "levels": [
            {
                "label": level_label(r),
                "axis": r.axis.value,
                "cells": drop_cells(r),
                "video": next((p for p in players if (p["axis"], p["level"]) == (r.axis.value, r.level)), None),
            }
            for r in section.levels
        ],
        "verdicts": section.verdicts,
        "flag": flag_text(section.flag) if section.flag else "",
        "table": category_table(rows),
        "unpaired": section.unpaired,
    }
    return context, curve


def suite_reasons(suite: SuiteReport) -> dict[str, Any] | None:
    """The suite page's overview: tasks x reasons (counts, and the change when moves were counted), then each
    move beyond noise as a sentence (the others are in the table); None when no episode recorded a reason."""
    section = suite.failure_reasons
    if section is None:
        return None
    seen = {r for t in section.tasks for r in (*t.counts, *t.perturbed)} | {m.reason for m in section.moves}
    reasons = [r for r in FailureReason if r in seen]
    moved = {(m.task_id, m.reason): m for m in section.moves}
    rows = []
    for t in section.tasks:
        cells = []
        for r in reasons:
            m = moved.get((t.task_id, r))
            change = f" ({m.change:+d})" if m is not None else ""
            cells.append({"text": f"{t.counts.get(r, 0)}{change}", "decisive": m is not None and m.decisive})
        rows.append({"task_id": t.task_id, "task_name": t.task_name, "failures": t.failures, "cells": cells})
    return {
        "reasons": [REASON_WORDS[r] for r in reasons],
        "rows": rows,
        "moves": [move_line(m, section.against) for m in section.moves if m.decisive],
        "within_noise": sum(not m.decisive for m in section.moves),
        "against": section.against,
        "note": section.note,
        "alpha": section.alpha,
    }


def task_reasons(
    suite: SuiteReport,
    task_id: int,
    players: Sequence[dict[str, Any]] = (),
    perturbed: Sequence[dict[str, Any]] = (),
) -> dict[str, Any] | None:
    """The task page's reasons table (now, previous, change, under perturbation, the video of one episode of
    that reason from ``players``: :func:`reasons_players`', and of one perturbed episode from ``perturbed``:
    :func:`perturbed_players`'); None without reasons."""
    section = suite.failure_reasons
    task = next((t for t in section.tasks if t.task_id == task_id), None) if section is not None else None
    if section is None or task is None:
        return None
    compared = bool(section.against)
    rows = reason_rows(task, section.moves, compared)
    video = {p["failure_reason"]: p for p in players}
    perturbed_video: dict[str, dict[str, Any]] = {}
    for p in perturbed:
        perturbed_video.setdefault(p["failure_reason"], p)
    return {
        "against": section.against,
        "unlabelled": task.unlabelled,
        "rows": [
            {
                "reason": r.reason.value,
                "word": r.word,
                "now": r.now,
                "before": "—" if r.before is None else r.before,
                "change": "—" if r.change is None else f"{r.change:+d}",
                "decisive": r.decisive,
                "perturbed": r.perturbed,
                "video": video.get(r.reason.value),
                "perturbed_video": perturbed_video.get(r.reason.value),
            }
            for r in rows
        ],
        "note": section.note,
    }


def reasons_players(episodes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One recorded video per failure reason (the first failed episode of that reason by run then state)."""
    out: dict[str, dict[str, Any]] = {}
    for e in sorted(episodes, key=lambda e: (e["run_index"], e["state"])):
        reason = e.get("failure_reason")
        if reason and e["video_href"] and not e["success"] and reason not in out:
            out[reason] = {**e, "reason_word": REASON_WORDS[FailureReason(reason)]}
    return [out[r.value] for r in FailureReason if r.value in out]


def perturbed_players(suite: SuiteReport, link: VideoLink, task_id: int | None = None) -> list[dict[str, Any]]:
    """The recorded perturbed episodes of ``suite`` (of task ``task_id`` when given) whose video has a link,
    failures first, each in the section's order (axis, task, initial state, level, run)."""
    section = suite.robustness
    found: list[dict[str, Any]] = []
    for o in section.states if section is not None else []:
        if task_id is not None and o.task_id != task_id:
            continue
        for v in o.videos:
            href = link(v.run_index, v.video)
            if href is None:
                continue
            reason = v.failure_reason
            found.append(
                {
                    "task_id": o.task_id,
                    "state": o.init_state,
                    "axis": o.axis.value,
                    "level": o.level,
                    "label": level_label(o),
                    "run_index": v.run_index,
                    "success": v.success,
                    "failure_reason": reason.value if reason is not None else "",
                    "reason_word": REASON_WORDS[reason] if reason is not None else "",
                    "video_href": href,
                }
            )
    return sorted(found, key=lambda p: bool(p["success"]))  # stable: the section's order within each
