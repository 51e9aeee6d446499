"""The gpu probe's MLflow mode: GPU utilization during policy update vs during rollout, from a training run.

MLflow's system-metrics monitor logs NVML utilization per GPU every few seconds; the training loop
logs each phase's duration per step. A step's phases are placed on the time line from its log time
(rollout starts the step, right after the previous step was logged; the update ends it, before any
save and the logging; the first step's rollout is left out, its start being unknown), and a system sample counts for a phase only when its whole averaging window
lies inside that phase. Samples straddling two phases are dropped rather than guessed.
"""

from __future__ import annotations

import itertools
import statistics
from typing import Any

from infra_probes import mlflow_source as src
from infra_probes.common import Outcome, extra_check, m
from infra_probes.targets import resolve_target
from rlinf_bench.contracts import Measurement, Target
from rlinf_bench.errors import ProbeUnavailableError

Interval = tuple[float, float]


def measure_from_mlflow(
    run_id: str,
    client: src.MetricClient,
    *,
    generate_metric: str = src.GENERATE,
    update_metric: str = src.UPDATE,
    save_metric: str = src.SAVE,
    instance_type: str | None = None,
) -> Outcome:
    """Per-phase mean NVML utilization and memory use of the run's GPUs."""
    keys = src.metric_keys(client, run_id)
    gpus = src.gpu_indices(keys)
    if not gpus:
        raise ProbeUnavailableError(
            f"MLflow run {run_id} has no system/gpu_<i>_utilization_percentage metrics; start training with "
            "MLFLOW_ENABLE_SYSTEM_METRICS_LOGGING=true (and nvidia-ml-py installed) to log them"
        )
    src.require(keys, [generate_metric, update_metric], run_id, "log the phase timings per step to split by phase")
    gen = src.by_step(src.history(client, run_id, generate_metric))
    upd = src.by_step(src.history(client, run_id, update_metric))
    save = src.by_step(src.history(client, run_id, save_metric)) if save_metric in keys else {}
    rollout_iv, update_iv = phase_intervals(gen, upd, save)
    util = {i: src.history(client, run_id, f"system/gpu_{i}_utilization_percentage") for i in gpus}
    window = _sample_window_s([p for pts in util.values() for p in pts])
    in_update = _inside(util, update_iv, window)
    in_rollout = _inside(util, rollout_iv, window)
    if not in_update:
        raise ProbeUnavailableError(
            f"no system-metrics sample of run {run_id} falls wholly inside a policy update (samples average over "
            f"~{window:.0f} s, updates last ~{statistics.median(p.value for p in upd.values()):.0f} s); "
            "lower MLFLOW_SYSTEM_METRICS_SAMPLING_INTERVAL / SAMPLES_BEFORE_LOGGING"
        )
    values = _values(client, run_id, keys, gpus, util, in_update, in_rollout)
    default = Target(metric="util_update_pct", op=">", value=70.0, unit="%", source="brief: >70 % during policy update")
    target = resolve_target("gpu", "util_update_pct", default, instance_type=instance_type)
    checks = _memory_check(values, instance_type)
    details: dict[str, Any] = {
        "mode": "mlflow",
        "run_id": run_id,
        "gpus": gpus,
        "sample_window_s": window,
        "steps": len(upd),
        "checks": checks,
        "method": "samples whose averaging window lies wholly inside a phase; phases placed from step log times",
    }
    note = "MLflow logs NVML utilization only (share of time any kernel runs), which overstates SM activity"
    return Outcome(values=values, target=target, details=details, note=note)


def _values(
    client: src.MetricClient,
    run_id: str,
    keys: list[str],
    gpus: list[int],
    util: dict[int, list[src.Point]],
    in_update: list[float],
    in_rollout: list[float],
) -> dict[str, Measurement]:
    values = {
        "util_update_pct": m(statistics.fmean(in_update), "%"),
        "util_overall_pct": m(statistics.fmean(p.value for pts in util.values() for p in pts), "%"),
        "samples_update": m(len(in_update), "count"),
        "samples_rollout": m(len(in_rollout), "count"),
    }
    if in_rollout:
        values["util_rollout_pct"] = m(statistics.fmean(in_rollout), "%")
    memory_keys = [src.GPU_MEM_PCT.format(i=i) for i in gpus if src.GPU_MEM_PCT.format(i=i) in keys]
    memory = [p.value for key in memory_keys for p in src.history(client, run_id, key)]
    if memory:
        values["memory_used_pct"] = m(statistics.fmean(memory), "%")
    return values


def phase_intervals(
    gen: dict[int, src.Point], upd: dict[int, src.Point], save: dict[int, src.Point]
) -> tuple[list[Interval], list[Interval]]:
    """Rollout and update intervals of each step, placed back from the step's log time."""
    rollout: list[Interval] = []
    update: list[Interval] = []
    previous_end: float | None = None
    for step in sorted(upd):
        end = upd[step].t - (save[step].value if step in save else 0.0)
        update.append((end - upd[step].value, end))
        # The first step's start is unknown (nothing was logged before it): its rollout is left out.
        if step in gen and previous_end is not None:
            rollout.append((previous_end, previous_end + gen[step].value))
        previous_end = upd[step].t
    return rollout, update


def _sample_window_s(points: list[src.Point]) -> float:
    times = sorted({p.t for p in points})
    gaps = [b - a for a, b in itertools.pairwise(times) if b > a]
    return statistics.median(gaps) if gaps else 10.0


def _inside(util: dict[int, list[src.Point]], intervals: list[Interval], window: float) -> list[float]:
    out = []
    for points in util.values():
        for p in points:
            if any(lo <= p.t - window and p.t <= hi for lo, hi in intervals):
                out.append(p.value)
    return out


def _memory_check(values: dict[str, Any], instance_type: str | None) -> list[dict[str, Any]]:
    target = resolve_target(
        "gpu",
        "memory_used_pct",
        Target(metric="memory_used_pct", op=">", value=80.0, unit="%", source="brief: memory > 80 % (used/total)"),
        instance_type=instance_type,
    )
    return extra_check(values, target)
