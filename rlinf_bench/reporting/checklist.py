"""The brief's "Validation Checklist", evaluated from the reports: pass / fail / not run, with evidence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rlinf_bench.contracts import CheckpointReport, ProbeName, ProbeResult, SuiteReport, VerdictValue
from rlinf_bench.reporting.format import human, pct, verdict_against
from rlinf_bench.reporting.infra_rows import infra_checks

Status = Literal["pass", "fail", "not run"]


@dataclass(frozen=True)
class ChecklistItem:
    item: str
    status: Status
    evidence: str


def _latest(reports: Sequence[CheckpointReport]) -> CheckpointReport | None:
    return max(reports, key=lambda r: r.global_step if r.global_step is not None else -1) if reports else None


def _suites_ran(item: str, suites: list[SuiteReport], what: str) -> ChecklistItem:
    if not suites:
        return ChecklistItem(item, "not run", f"no {what} suite in the latest checkpoint's evaluation")
    ok = [s for s in suites if s.runs_completed > 0 and s.tasks]
    evidence = "; ".join(f"{s.suite}: {s.runs_completed}/{s.runs_expected} runs, {len(s.tasks)} tasks" for s in suites)
    return ChecklistItem(item, "pass" if len(ok) == len(suites) else "fail", evidence)


def _probe_item(item: str, probes: dict[str, ProbeResult], name: str, metrics: set[str]) -> ChecklistItem:
    """Judged on the item's own metrics: fail when one misses its target, pass when all meet it."""
    p = probes.get(name)
    if p is None:
        return ChecklistItem(item, "not run", f"no {name} probe result")
    checks = [c for c in infra_checks([p]) if c.metric in metrics]
    judged = [c for c in checks if c.verdict in ("pass", "fail")]
    parts = []
    for c in checks:
        value = human(c.value, c.unit)
        target = f" (target {c.op} {human(c.target, c.unit)})" if c.target is not None else ""
        parts.append(f"{c.metric}={value}{target}: {c.verdict}")
    if p.reason:
        parts.append(p.reason)
    status: Status = "fail" if any(c.verdict == "fail" for c in judged) else "pass" if judged else "not run"
    return ChecklistItem(item, status, "; ".join(parts))


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
    items = [
        _suites_ran(
            "LIBERO evaluation runs and produces per-task success rates",
            [s for s in suites if s.suite.startswith("libero")],
            "LIBERO",
        )
    ]
    baseline_verdicts = [v for v in (latest.verdicts if latest else []) if v.kind == "baseline"]
    range_item = "Success rates are in expected range (compare to paper)"
    if not baseline_verdicts:
        items.append(ChecklistItem(range_item, "not run", "no baseline selected"))
    else:
        evidence = "; ".join(
            f"{v.suite} {pct(v.estimate)} vs {verdict_against(v)} {pct(v.reference)}: {v.value.value}"
            for v in baseline_verdicts
        )
        values = {v.value for v in baseline_verdicts}
        # Pass needs a decisive good verdict: not comparable, inconclusive or incomplete answer nothing.
        status: Status = (
            "fail"
            if VerdictValue.BELOW in values
            else "pass"
            if values & {VerdictValue.WITHIN, VerdictValue.ABOVE} and VerdictValue.INCOMPLETE not in values
            else "not run"
        )
        items.append(ChecklistItem(range_item, status, evidence))
    items.append(
        _suites_ran(
            "RoboTwin evaluation runs (if applicable)",
            [s for s in suites if s.suite.startswith("robotwin")],
            "RoboTwin",
        )
    )
    items.append(_probe_item("GPU utilization > 70% during policy updates", probes, ProbeName.GPU, {"util_update_pct"}))
    items.append(
        _probe_item("NCCL bandwidth matches expectations for instance type", probes, ProbeName.NCCL, {"busbw_gbps"})
    )
    items.append(
        _probe_item(
            "Checkpoint save/load time is acceptable (< 60s)", probes, ProbeName.CHECKPOINT_IO, {"save_s", "load_s"}
        )
    )
    mlflow_item = "Results are logged to MLflow for comparison"
    if mlflow_evidence:
        items.append(ChecklistItem(mlflow_item, "pass", mlflow_evidence))
    else:
        run = latest.links.get("mlflow_run") if latest else None
        items.append(
            ChecklistItem(mlflow_item, "pass", f"MLflow run {run}")
            if run
            else ChecklistItem(mlflow_item, "not run", "not published to MLflow")
        )
    return items
