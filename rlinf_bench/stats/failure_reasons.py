"""Why episodes failed: per task, the count of each reason over the completed runs, and how the counts moved
against the previous checkpoint (docs/robustness.md, "Statistics").

A count that moved is tested like a success rate: per initial state, the fraction of its episodes that failed
for that reason, now against before, in a paired t-test over the states both evaluated (two-sided: a reason
can grow or shrink). Every (task, reason) seen on either side is one test; Holm's correction over the suite's
tests keeps "moved beyond noise" (``decisive``) at the verdicts' alpha for the whole suite, so a summary that
says "12 more grasp failures on task 3" is not one of ninety coin flips.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rlinf_bench.contracts import FailureReason, RunResult, StateOutcome, SuiteReport
from rlinf_bench.contracts.robustness_report import ReasonMove, ReasonsSection, TaskReasons
from rlinf_bench.stats.pertask import holm
from rlinf_bench.stats.significance import paired_test

__all__ = ["reason_moves", "reasons_section"]


def reasons_section(completed: Sequence[RunResult]) -> ReasonsSection | None:
    """Per task, its failures by reason (standard episodes; perturbed ones apart); None when no episode of the
    runs recorded a reason (results written before reasons were recorded)."""
    rows: dict[int, TaskReasons] = {}
    counts: dict[int, Counter[FailureReason]] = {}
    perturbed: dict[int, Counter[FailureReason]] = {}
    labelled = False
    for run in completed:
        for task in run.tasks:
            row = rows.setdefault(
                task.task_id, TaskReasons(task_id=task.task_id, task_name=task.task_name, episodes=0, failures=0)
            )
            mine, theirs = counts.setdefault(task.task_id, Counter()), perturbed.setdefault(task.task_id, Counter())
            row.episodes += len(task.episodes)
            for e in task.episodes:
                if e.success:
                    continue
                row.failures += 1
                if e.failure_reason is None:
                    row.unlabelled += 1
                else:
                    mine[e.failure_reason] += 1
            for e in task.perturbed:
                if not e.success and e.failure_reason is not None:
                    theirs[e.failure_reason] += 1
            labelled = labelled or bool(mine) or bool(theirs)
    if not labelled:
        return None
    return ReasonsSection(
        tasks=[
            r.model_copy(update={"counts": _ordered(counts[t]), "perturbed": _ordered(perturbed[t])})
            for t, r in sorted(rows.items())
        ]
    )


def _ordered(c: Counter[FailureReason]) -> dict[FailureReason, int]:
    """In the order of the reasons' checks (FailureReason's order), zeros left out."""
    return {r: c[r] for r in FailureReason if c[r]}


def _per_state(states: Sequence[StateOutcome], task_id: int, reason: FailureReason) -> dict[int, float]:
    """init_state -> fraction of its episodes (runs) that failed for ``reason``; states without rows left out."""
    out = {}
    for s in states:
        if s.task_id == task_id and s.episodes:
            out[s.init_state] = sum(e.failure_reason == reason for e in s.episodes) / len(s.episodes)
    return out


def _two_sided_p(current: SuiteReport, reference: SuiteReport, task_id: int, reason: FailureReason) -> float | None:
    now = _per_state(current.states, task_id, reason)
    before = _per_state(reference.states, task_id, reason)
    keys = sorted(now.keys() & before.keys())
    if not keys:
        return None
    out = paired_test([now[k] for k in keys], [before[k] for k in keys], 0.0)
    return min(1.0, 2 * min(out.p_below, out.p_above))


def reason_moves(current: SuiteReport, reference: SuiteReport, *, label: str, alpha: float) -> ReasonsSection | None:
    """``current.failure_reasons`` with its moves against ``reference`` (the previous checkpoint, evaluated alike:
    the caller checks that); a note says why there are none when the reference recorded no reasons."""
    mine = current.failure_reasons
    if mine is None:
        return None
    theirs = reference.failure_reasons
    if theirs is None:
        return mine.model_copy(update={"moves": [], "against": "", "note": f"{label} recorded no failure reasons"})
    before = {t.task_id: t for t in theirs.tasks}
    tested: list[ReasonMove] = []
    for t in mine.tasks:
        prev = before.get(t.task_id)
        if prev is None:
            continue
        for reason in FailureReason:
            now_n, before_n = t.counts.get(reason, 0), prev.counts.get(reason, 0)
            if now_n or before_n:
                p = _two_sided_p(current, reference, t.task_id, reason)
                move = ReasonMove(
                    task_id=t.task_id, task_name=t.task_name, reason=reason, before=before_n, now=now_n, p_value=p
                )
                tested.append(move)
    with_p = [m for m in tested if m.p_value is not None]
    for m, adjusted in zip(with_p, holm([m.p_value for m in with_p if m.p_value is not None]), strict=True):
        m.p_adjusted = adjusted
        m.decisive = adjusted < alpha
    moved = sorted((m for m in tested if m.change), key=lambda m: (-abs(m.change), m.task_id, m.reason.value))
    return mine.model_copy(update={"moves": moved, "against": label, "alpha": alpha, "note": ""})
