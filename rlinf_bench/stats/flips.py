"""Initial states that flipped between two checkpoints: passed in every run before, fail in every run
now (``to_failure``), or the reverse (``to_success``).

A state that fails 3 of 3 runs after passing 3 of 3 is not noise at any plausible per-state rate: it is
where to look first (a changed environment, a broken skill), and the list is what a "below" verdict
hands its reader.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rlinf_bench.contracts import StateFlip, SuiteReport

__all__ = ["FlipRow", "flip_summary", "flip_table", "flipped_states"]


def flipped_states(current: SuiteReport, reference: SuiteReport) -> list[StateFlip]:
    """Every (task, initial state) evaluated on both sides whose outcome flipped in every run."""
    names = {t.task_id: t.task_name for t in current.tasks}
    ref = {(s.task_id, s.init_state): s for s in reference.states}
    out: list[StateFlip] = []
    for s in current.states:
        before = ref.get((s.task_id, s.init_state))
        if before is None:
            continue
        if before.successes == before.trials and s.successes == 0:
            direction = "to_failure"
        elif before.successes == 0 and s.successes == s.trials:
            direction = "to_success"
        else:
            continue
        out.append(
            StateFlip(
                task_id=s.task_id,
                task_name=names.get(s.task_id, ""),
                init_state=s.init_state,
                direction=direction,
                before=f"{before.successes}/{before.trials}",
                now=f"{s.successes}/{s.trials}",
            )
        )
    return sorted(out, key=lambda f: (f.task_id, f.init_state))


def flip_summary(suite: SuiteReport) -> list[str]:
    """Short lines for Slack and email: ``task 3 (name): 4 states flipped to failure``."""
    counts = Counter((f.task_id, f.task_name, f.direction) for f in suite.flips)
    lines = []
    for (task_id, name, direction), n in sorted(counts.items(), key=lambda kv: (kv[0][2] != "to_failure", kv[0][0])):
        label = f"task {task_id}" + (f" ({name})" if name else "")
        what = "failure" if direction == "to_failure" else "success"
        lines.append(f"{label}: {n} state{'s' if n != 1 else ''} flipped to {what}")
    return lines


@dataclass
class FlipRow:
    """One task's flipped states, for a table: which states went to failure and which to success."""

    task_id: int
    task_name: str
    to_failure: list[int] = field(default_factory=list)
    to_success: list[int] = field(default_factory=list)


def flip_table(suite: SuiteReport) -> list[FlipRow]:
    """One row per task with a flip, tasks with states flipped to failure first (what a reader looks for)."""
    rows: dict[int, FlipRow] = {}
    for f in suite.flips:
        row = rows.setdefault(f.task_id, FlipRow(f.task_id, f.task_name))
        (row.to_failure if f.direction == "to_failure" else row.to_success).append(f.init_state)
    return sorted(rows.values(), key=lambda r: (not r.to_failure, r.task_id))
