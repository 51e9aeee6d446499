"""The brief's "Validation Checklist", evaluated from the reports: one status per item, with evidence.

Four statuses, and each says what it rests on:

- ``pass`` / ``fail``: decided, and the evidence states what was measured (runs, tasks, episodes; bytes,
  parameters, seconds) next to the target.
- ``not decided``: it ran, but its result cannot answer the item; ``why`` says why (the only verdict
  was not comparable, the probe ran at demo size, no target is known for this machine).
- ``not run``: nothing was measured; ``why`` says what is missing.

A line never reads "not run" for something that ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rlinf_bench.contracts import (
    CheckpointReport,
    InfraCheck,
    ProbeName,
    ProbeResult,
    SuiteReport,
    Verdict,
    VerdictValue,
)
from rlinf_bench.reporting.format import DECISIVE, human, pct, verdict_against
from rlinf_bench.reporting.infra_rows import infra_checks
from rlinf_bench.reporting.probe_scope import measured_scope
from rlinf_bench.suites import BENCHMARKS, benchmark_of

__all__ = ["ChecklistItem", "Status", "validation_checklist"]

Status = Literal["pass", "fail", "not decided", "not run"]


@dataclass(frozen=True)
class ChecklistItem:
    """One item of the brief's checklist: its status, why when it is not decided or not run, and what was
    measured."""

    item: str
    status: Status
    evidence: str
    why: str = ""

    @property
    def text(self) -> str:
        """Why first (when there is one), then the evidence: the one text every renderer shows."""
        return "; ".join(x for x in (self.why, self.evidence) if x)


def _latest(reports: Sequence[CheckpointReport]) -> CheckpointReport | None:
    return max(reports, key=lambda r: r.global_step if r.global_step is not None else -1) if reports else None


def _suites_ran(item: str, suites: list[SuiteReport], what: str) -> ChecklistItem:
    if not suites:
        return ChecklistItem(item, "not run", "", why=f"no {what} suite in the latest checkpoint's evaluation")
    ok = [s for s in suites if s.runs_completed > 0 and s.tasks]
    evidence = "; ".join(
        f"{s.suite}: {s.runs_completed}/{s.runs_expected} runs, {len(s.tasks)} tasks, {s.episodes} episodes"
        for s in suites
    )
    return ChecklistItem(item, "pass" if len(ok) == len(suites) else "fail", evidence)


def _range_item(item: str, latest: CheckpointReport | None) -> ChecklistItem:
    """Pass needs a decisive good verdict against a published number; not comparable, inconclusive and
    incomplete verdicts answer nothing, and say why."""
    verdicts = [v for v in (latest.verdicts if latest else []) if v.kind == "baseline"]
    if latest is None or not latest.suites:
        return ChecklistItem(item, "not run", "", why="no evaluation")
    if not verdicts:
        return ChecklistItem(item, "not run", "", why="no published baseline selected")
    evidence = "; ".join(
        f"{v.suite} {pct(v.estimate)} vs {verdict_against(v)} {pct(v.reference)}: {v.value.value.replace('_', ' ')}"
        for v in verdicts
    )
    values = {v.value for v in verdicts}
    if VerdictValue.BELOW in values:
        return ChecklistItem(item, "fail", evidence)
    if values & {VerdictValue.WITHIN, VerdictValue.ABOVE} and VerdictValue.INCOMPLETE not in values:
        return ChecklistItem(item, "pass", evidence)
    undecided = [v for v in verdicts if v.value not in DECISIVE]
    return ChecklistItem(item, "not decided", evidence, why="; ".join(_why_not(v) for v in undecided))


def _why_not(v: Verdict) -> str:
    reason = f": {v.reason}" if v.reason else ""
    return f"{v.suite} vs {v.against} {v.value.value.replace('_', ' ')}{reason}"


def _probe_item(item: str, probes: dict[str, ProbeResult], name: str, metrics: set[str]) -> ChecklistItem:
    """Judged on the item's own metrics: fail when one misses its target, pass when all meet it; a run too
    small for its target, or without one, is not decided; a probe that measured nothing says why."""
    p = probes.get(name)
    if p is None:
        return ChecklistItem(item, "not run", "", why=f"no {name} probe ran")
    scope = measured_scope(p)
    if not p.values:
        status: Status = "fail" if p.verdict.value == "fail" else "not run"
        why = p.reason or ("the probe failed" if status == "fail" else "nothing measured")
        return ChecklistItem(item, status, f"nothing measured ({scope})" if scope else "nothing measured", why=why)
    checks = [c for c in infra_checks([p]) if c.metric in metrics]
    parts = []
    for c in checks:
        target = f" (target {c.op} {human(c.target, c.unit)})" if c.target is not None else " (no target)"
        parts.append(f"{c.metric} {human(c.value, c.unit)}{target}")
    evidence = "; ".join(x for x in (", ".join(parts), scope) if x)
    verdicts = {c.verdict for c in checks}
    if "fail" in verdicts:
        return ChecklistItem(item, "fail", evidence)
    if verdicts == {"pass"}:
        return ChecklistItem(item, "pass", evidence)
    return ChecklistItem(item, "not decided", evidence, why=_undecided_why(p, checks))


def _undecided_why(p: ProbeResult, checks: list[InfraCheck]) -> str:
    """Why measured values decided nothing: run at demo size, no target here (a CPU stand-in, an unknown
    instance type), or figures the probe says are not the thing; the item's metric not measured at all."""
    if not checks:
        return f"none of the item's metrics was measured ({', '.join(sorted(p.values))} were)"
    reasons = (c.reason for c in checks if c.verdict != "pass" and c.reason and c.reason != "no target for this metric")
    return next(reasons, "no target here")


def _mlflow_item(latest: CheckpointReport | None, mlflow_evidence: str | None) -> ChecklistItem:
    item = "Results are logged to MLflow for comparison"
    if mlflow_evidence:
        return ChecklistItem(item, "pass", mlflow_evidence)
    run = latest.links.get("mlflow_run") if latest else None
    if run:
        return ChecklistItem(item, "pass", f"MLflow run {run}")
    return ChecklistItem(item, "not run", "", why="not published to MLflow")


def validation_checklist(
    reports: Sequence[CheckpointReport], *, mlflow_evidence: str | None = None
) -> list[ChecklistItem]:
    """Evaluate each checklist item on the latest checkpoint (probes: the latest result of each probe)."""
    latest = _latest(reports)
    suites = latest.suites if latest else []
    probes: dict[str, ProbeResult] = {}
    for r in sorted(reports, key=lambda x: x.global_step if x.global_step is not None else -1):
        for p in r.probes:
            probes[p.probe] = p
    # The brief's order: the benchmarks every checkpoint is evaluated on, the range check, then the optional ones.
    ran = {
        b.key: _suites_ran(b.checklist_item, [s for s in suites if benchmark_of(s.suite) == b], b.label)
        for b in BENCHMARKS.values()
        if b.checklist_item
    }
    required = [ran[b.key] for b in BENCHMARKS.values() if b.key in ran and not b.optional]
    optional = [ran[b.key] for b in BENCHMARKS.values() if b.key in ran and b.optional]
    return [
        *required,
        _range_item("Success rates are in expected range (compare to paper)", latest),
        *optional,
        _probe_item("GPU utilization > 70% during policy updates", probes, ProbeName.GPU, {"util_update_pct"}),
        _probe_item("NCCL bandwidth matches expectations for instance type", probes, ProbeName.NCCL, {"busbw_gbps"}),
        _probe_item(
            "Checkpoint save/load time is acceptable (< 60s)", probes, ProbeName.CHECKPOINT_IO, {"save_s", "load_s"}
        ),
        _mlflow_item(latest, mlflow_evidence),
    ]
