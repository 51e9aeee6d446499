"""RoboTwin results by horizon group (short / medium / long / extra-long), as the brief reports them.

A group's success rate in one run is the mean of its tasks' success rates (how the source computes
its group columns), and a group is reported only from runs that cover every one of its tasks: a
subset would be compared with a number computed over other tasks. Rows follow the brief: the four
groups, its merged long + extra-long column, and the overall average of the twelve tasks. Each row is
compared with the published group baselines where the source has one.

Standalone on purpose (plain RunResults in, plain rows out) so the aggregation pipeline can call it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from rlinf_bench.baselines import Baseline, get_baseline
from rlinf_bench.contracts import CheckpointReport, RunResult, RunStatus
from rlinf_bench.errors import ResultsMismatchError
from rlinf_bench.robotwin import GROUP_ORDER, horizon_columns, horizon_groups, is_robotwin_suite

__all__ = ["DEFAULT_GROUP_BASELINES", "GroupRow", "horizon_rows", "tasks_by_run", "tasks_by_run_from_report"]

#: The brief's RoboTwin table rows (group baselines keyed by the column suite ids).
DEFAULT_GROUP_BASELINES = ("robotwin/openvla-oft-sft", "robotwin/rlinf")
OVERALL = "overall"

_LABELS = {
    "short": "Short",
    "medium": "Medium",
    "long": "Long",
    "extra_long": "Extra-long",
    "long_xl": "Long+XL",
    OVERALL: "Overall",
}


@dataclass(frozen=True)
class GroupRow:
    """One row of the horizon table: a group (or column, or the overall average) over the runs."""

    key: str
    label: str
    tasks: tuple[str, ...]
    run_rates: dict[int, float]  # run index -> mean task success rate (fraction), complete runs only
    missing: dict[int, tuple[str, ...]]  # run index -> tasks of this row that run lacks
    baselines: dict[str, float] = field(default_factory=dict)  # baseline name -> percent, as published

    @property
    def mean(self) -> float | None:
        """Mean over runs of the run's group rate, or None when no run covers the whole group."""
        return statistics.fmean(self.run_rates.values()) if self.run_rates else None

    @property
    def std(self) -> float | None:
        """Sample standard deviation over runs (None with fewer than two)."""
        return statistics.stdev(self.run_rates.values()) if len(self.run_rates) >= 2 else None

    @property
    def complete(self) -> bool:
        """Every run that reported any task covers all tasks of the row."""
        return bool(self.run_rates) and not self.missing

    def delta(self, baseline: str) -> float | None:
        """Our mean minus the baseline, in percentage points; None when either is missing or partial."""
        if not self.complete or baseline not in self.baselines or self.mean is None:
            return None
        return 100.0 * self.mean - self.baselines[baseline]


def tasks_by_run(results: Sequence[RunResult]) -> dict[int, dict[str, float]]:
    """Run index -> task name -> success rate, over the complete RoboTwin runs.

    A task evaluated twice in one run index (two suites covering it) is ambiguous and refused.
    """
    out: dict[int, dict[str, float]] = {}
    where: dict[tuple[int, str], str] = {}
    for r in results:
        if not is_robotwin_suite(r.suite) or r.status is not RunStatus.COMPLETE:
            continue
        per_task = out.setdefault(r.run_index, {})
        for t in r.tasks:
            key = (r.run_index, t.task_name)
            if key in where:
                raise ResultsMismatchError(
                    f"task {t.task_name} appears in run {r.run_index} of both {where[key]} and {r.suite}; "
                    "pass one result per task and run"
                )
            where[key] = r.suite
            per_task[t.task_name] = t.success_rate
    return out


def tasks_by_run_from_report(report: CheckpointReport) -> dict[int, dict[str, float]]:
    """The same mapping from an aggregated report (complete runs of its RoboTwin suites)."""
    out: dict[int, dict[str, float]] = {}
    for suite in report.suites:
        if not is_robotwin_suite(suite.suite):
            continue
        for pos, run in enumerate(suite.runs):
            if run.status is not RunStatus.COMPLETE:
                continue
            per_task = out.setdefault(run.run_index, {})
            for task in suite.tasks:
                rate = task.run_success_rates[pos] if pos < len(task.run_success_rates) else None
                if rate is not None:
                    per_task[task.task_name] = rate
    return out


def _row(key: str, tasks: Sequence[str], by_run: dict[int, dict[str, float]]) -> GroupRow:
    rates: dict[int, float] = {}
    missing: dict[int, tuple[str, ...]] = {}
    for run_index, per_task in sorted(by_run.items()):
        present = [t for t in tasks if t in per_task]
        if not present:
            continue  # this run evaluated other groups only
        absent = tuple(t for t in tasks if t not in per_task)
        if absent:
            missing[run_index] = absent
            continue
        rates[run_index] = statistics.fmean(per_task[t] for t in tasks)
    return GroupRow(key, _LABELS.get(key, key), tuple(tasks), rates, missing)


def _baseline_values(key: str, baselines: Sequence[Baseline]) -> dict[str, float]:
    column = f"robotwin_{key}"
    out: dict[str, float] = {}
    for b in baselines:
        if key == OVERALL and b.average is not None:
            out[b.name] = b.average
        elif column in b.values:
            out[b.name] = b.values[column]
    return out


def horizon_rows(
    results: Sequence[RunResult] | CheckpointReport, baselines: Sequence[Baseline] | None = None
) -> list[GroupRow]:
    """The horizon table: short, medium, long, extra_long, the brief's merged columns, overall.

    ``results`` are RunResults (any RoboTwin suites, any runs) or an aggregated CheckpointReport.
    Rows no run touched are left out. ``baselines`` defaults to the brief's two group tables.
    """
    if baselines is None:
        baselines = [get_baseline(n) for n in DEFAULT_GROUP_BASELINES]
    by_run = tasks_by_run_from_report(results) if isinstance(results, CheckpointReport) else tasks_by_run(results)
    groups = horizon_groups()
    wanted: list[tuple[str, list[str]]] = [(g, list(groups[g].tasks)) for g in GROUP_ORDER]
    for column, members in horizon_columns().items():
        key = column.removeprefix("robotwin_")
        if key not in groups:  # a merged column such as long_xl
            wanted.append((key, [t for m in members for t in groups[m].tasks]))
    wanted.append((OVERALL, [t for g in GROUP_ORDER for t in groups[g].tasks]))
    rows = []
    for key, tasks in wanted:
        row = _row(key, tasks, by_run)
        if row.run_rates or row.missing:
            rows.append(replace(row, baselines=_baseline_values(key, baselines)))
    return rows
