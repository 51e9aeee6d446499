"""Results by task group, for the benchmarks whose catalogue entry groups their tasks (the brief's horizon table).

A group's success rate in one run is the mean of its tasks' success rates (how the source computes
its group columns), and a group is reported only from runs that cover every one of its tasks: a
subset would be compared with a number computed over other tasks. Rows follow the catalogue's grouping
(:class:`rlinf_bench.suites.TaskGrouping`): its groups, its merged columns, and the overall average.
Each row is compared with the published group baselines where the source has one.

Standalone on purpose (plain RunResults in, plain rows out) so the aggregation pipeline can call it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from rlinf_bench.baselines import Baseline, get_baseline
from rlinf_bench.contracts import CheckpointReport, RunResult, RunStatus
from rlinf_bench.errors import ResultsMismatchError
from rlinf_bench.suites import Benchmark, GroupSpec, TaskGrouping, benchmark_of, task_groupings

__all__ = ["GroupRow", "group_tables", "horizon_rows", "tasks_by_run", "tasks_by_run_from_report"]


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


def _of(suite: str, benchmark: Benchmark) -> bool:
    return benchmark_of(suite) == benchmark


def tasks_by_run(results: Sequence[RunResult], benchmark: Benchmark) -> dict[int, dict[str, float]]:
    """Run index -> task name -> success rate, over the complete runs of ``benchmark``'s suites.

    A task evaluated twice in one run index (two suites covering it) is ambiguous and refused.
    """
    out: dict[int, dict[str, float]] = {}
    where: dict[tuple[int, str], str] = {}
    for r in results:
        if not _of(r.suite, benchmark) or r.status is not RunStatus.COMPLETE:
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


def tasks_by_run_from_report(report: CheckpointReport, benchmark: Benchmark) -> dict[int, dict[str, float]]:
    """The same mapping from an aggregated report (complete runs of its suites of ``benchmark``)."""
    out: dict[int, dict[str, float]] = {}
    for suite in report.suites:
        if not _of(suite.suite, benchmark):
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


def _row(spec: GroupSpec, by_run: dict[int, dict[str, float]]) -> GroupRow:
    rates: dict[int, float] = {}
    missing: dict[int, tuple[str, ...]] = {}
    for run_index, per_task in sorted(by_run.items()):
        present = [t for t in spec.tasks if t in per_task]
        if not present:
            continue  # this run evaluated other groups only
        absent = tuple(t for t in spec.tasks if t not in per_task)
        if absent:
            missing[run_index] = absent
            continue
        rates[run_index] = statistics.fmean(per_task[t] for t in spec.tasks)
    return GroupRow(spec.key, spec.label, spec.tasks, rates, missing)


def _baseline_values(spec: GroupSpec, baselines: Sequence[Baseline]) -> dict[str, float]:
    """Each baseline's published value of the row: its column, or (a row without one) the table's average."""
    out: dict[str, float] = {}
    for b in baselines:
        if not spec.baseline_column and b.average is not None:
            out[b.name] = b.average
        elif spec.baseline_column in b.values:
            out[b.name] = b.values[spec.baseline_column]
    return out


def group_rows(
    results: Sequence[RunResult] | CheckpointReport,
    benchmark: Benchmark,
    grouping: TaskGrouping,
    baselines: Sequence[Baseline] | None = None,
) -> list[GroupRow]:
    """The grouping's table for ``benchmark``: one row per group the runs touched, in the grouping's order.

    ``results`` are RunResults (any suites, any runs) or an aggregated CheckpointReport. ``baselines``
    defaults to the grouping's published group tables.
    """
    if baselines is None:
        baselines = [get_baseline(n) for n in grouping.default_baselines]
    if isinstance(results, CheckpointReport):
        by_run = tasks_by_run_from_report(results, benchmark)
    else:
        by_run = tasks_by_run(results, benchmark)
    rows = []
    for spec in grouping.rows:
        row = _row(spec, by_run)
        if row.run_rates or row.missing:
            rows.append(replace(row, baselines=_baseline_values(spec, baselines)))
    return rows


def group_tables(
    results: Sequence[RunResult] | CheckpointReport,
) -> list[tuple[TaskGrouping, list[GroupRow]]]:
    """Every catalogue grouping with its rows, for the benchmarks the results touch."""
    tables = [(g, group_rows(results, b, g)) for b, g in task_groupings()]
    return [(g, rows) for g, rows in tables if rows]


def horizon_rows(
    results: Sequence[RunResult] | CheckpointReport, baselines: Sequence[Baseline] | None = None
) -> list[GroupRow]:
    """The rows of every catalogue grouping the results touch (today one: the brief's horizon table)."""
    return [row for b, g in task_groupings() for row in group_rows(results, b, g, baselines)]
