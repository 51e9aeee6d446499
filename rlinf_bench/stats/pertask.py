"""Per-task run-disagreement flags: Cochran's Q within each task, Holm-corrected over the suite's tasks.

A suite-level Q averages a broken task away among nine healthy ones; testing each task finds it, at the
price of one test per task. Holm's step-down procedure keeps the chance of flagging any task by
chance alone at the flag level (family-wise), and is never less powerful than Bonferroni.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rlinf_bench.contracts import Disagreement, RunResult, TaskSummary
from rlinf_bench.stats.significance import cochran_q

__all__ = ["TASK_DISAGREEMENT_ALPHA", "holm", "task_disagreements"]

#: Same level as the suite-level flag: a flag should mean "look at the nodes", not routine noise.
TASK_DISAGREEMENT_ALPHA = 0.01


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (same order as given), capped at 1 and monotone in rank."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def task_disagreements(
    tasks: Sequence[TaskSummary], completed: Sequence[RunResult], states: dict[tuple[int, int], list[int]]
) -> list[TaskSummary]:
    """``tasks`` with ``disagreement`` set when the runs replayed the same states (else unchanged)."""
    r = len(completed)
    if r < 2:
        return list(tasks)
    tested: list[tuple[TaskSummary, float, float]] = []
    for t in tasks:
        rows = [v for (tid, _), v in states.items() if tid == t.task_id]
        if not rows or any(len(v) != r for v in rows):
            continue  # runs did not replay the same states of this task: no blocking possible
        res = cochran_q(np.array(rows))
        tested.append((t, res.statistic, res.p_value))
    adjusted = holm([p for _, _, p in tested])
    correction = f"Holm over {len(tested)} tasks (family-wise error {TASK_DISAGREEMENT_ALPHA:g})"
    flagged: dict[int, Disagreement] = {}
    for (t, stat, p), p_adj in zip(tested, adjusted, strict=True):
        flagged[t.task_id] = Disagreement(
            test="Cochran's Q (runs x initial states of the task)",
            statistic=stat,
            df=r - 1,
            p_value=p,
            alpha=TASK_DISAGREEMENT_ALPHA,
            flagged=p_adj < TASK_DISAGREEMENT_ALPHA,
            p_adjusted=p_adj,
            correction=correction,
        )
    return [t.model_copy(update={"disagreement": flagged.get(t.task_id)}) for t in tasks]
