"""Throughput probe: steps per hour and phase timings of a training run logged to MLflow.

Steps per hour come from global_step against wall time (MLflow's own timestamps), so restarts and
stalls count, unlike a mean of per-step durations. The bottleneck is the phase with the largest
share of the step: rollout (``timing/generate``; env rendering dominates it) or policy update.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
from typing import Any

from infra_probes import mlflow_source as src
from infra_probes.common import Outcome, m, summary_percentiles
from infra_probes.environment import detect_environment
from infra_probes.targets import resolve_target
from rlinf_bench.contracts import ProbeEnvironment, Target
from rlinf_bench.errors import ProbeUnavailableError

BRIEF_SAVE_S = 60.0


class ThroughputSettings(src.TrainingRunSettings):
    step_metric: str = "global_step"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run-id", help="MLflow run id of the training run (or --experiment for its latest run)")
    src.add_arguments(parser)
    parser.add_argument(
        "--step-metric",
        default="global_step",
        help="metric whose value is the global step; if the run lacks it, the steps of --update-metric are used",
    )


def settings_from_args(args: argparse.Namespace) -> ThroughputSettings:
    return ThroughputSettings(step_metric=args.step_metric, **src.settings_from_args(args))


def environment(settings: ThroughputSettings) -> ProbeEnvironment:
    return detect_environment(instance_type=settings.instance_type, with_gpu=False)


def measure(settings: ThroughputSettings, client: src.MetricClient | None = None) -> Outcome:
    """Read the run's histories and summarize them; ``client`` defaults to an MlflowClient."""
    client = client or src.open_client(settings.tracking_uri)
    run_id = src.resolve_run(client, settings.run_id, settings.experiment)
    keys = src.metric_keys(client, run_id)
    src.require(
        keys,
        [settings.generate_metric, settings.update_metric],
        run_id,
        "log the phase timings (seconds) per step, or name them with --generate-metric/--update-metric",
    )
    gen = src.history(client, run_id, settings.generate_metric)
    upd = src.history(client, run_id, settings.update_metric)
    save = src.history(client, run_id, settings.save_metric) if settings.save_metric in keys else []
    steps = _step_points(client, settings, run_id, keys, upd)
    values: dict[str, Any] = {"steps_per_hour": m(_steps_per_hour(steps, run_id), "steps/h")}
    summaries: dict[str, dict[str, float]] = {}
    for name, points in (("generate", gen), ("update", upd), ("save", save)):
        summary = summary_percentiles([p.value for p in points])
        if not summary:
            continue
        summaries[name] = summary
        for stat in ("mean", "p50", "p95"):
            values[f"{name}_{stat}_s"] = m(summary[stat], "s")
    step_wall = _step_wall_s(steps)
    shares = _shares(summaries, step_wall)
    for phase, share in shares.items():
        values[f"{phase}_share_pct"] = m(100 * share, "%")
    bottleneck = max(shares, key=lambda k: shares[k])
    default = (
        Target(metric="save_p95_s", op="<", value=BRIEF_SAVE_S, unit="s", source="brief: timing/save < 60 s with FSx")
        if "save" in summaries
        else None
    )
    target = resolve_target("throughput", "save_p95_s", default, instance_type=settings.instance_type)
    details = {
        "run_id": run_id,
        "steps_logged": len(steps),
        "first_step": steps[0].value if steps else None,
        "last_step": steps[-1].value if steps else None,
        "step_wall_s": step_wall,
        "summaries": summaries,
        "bottleneck": bottleneck,
        "shares_of": "mean step wall time (log-time difference)" if step_wall else "generate + update + save",
    }
    note = f"bottleneck: {bottleneck} ({100 * shares[bottleneck]:.0f} % of a step)"
    return Outcome(values=values, target=target, details=details, note=note)


def _step_points(
    client: src.MetricClient, settings: ThroughputSettings, run_id: str, keys: list[str], fallback: list[src.Point]
) -> list[src.Point]:
    """(time, global step) pairs: the step metric's values, else the update metric's step column."""
    if settings.step_metric in keys:
        return src.history(client, run_id, settings.step_metric)
    return [src.Point(t=p.t, step=p.step, value=float(p.step)) for p in fallback]


def _steps_per_hour(steps: list[src.Point], run_id: str) -> float:
    if len(steps) < 2 or steps[-1].t <= steps[0].t:
        raise ProbeUnavailableError(
            f"MLflow run {run_id} logged {len(steps)} step(s); steps per hour needs at least 2 at different times"
        )
    return (steps[-1].value - steps[0].value) / (steps[-1].t - steps[0].t) * 3600.0


def _step_wall_s(steps: list[src.Point]) -> float | None:
    """Median wall time between consecutive logged steps, divided by the steps between them."""
    per_step = [(b.t - a.t) / (b.value - a.value) for a, b in itertools.pairwise(steps) if b.value > a.value]
    return statistics.median(per_step) if per_step else None


def _shares(summaries: dict[str, dict[str, float]], step_wall: float | None) -> dict[str, float]:
    means = {"rollout": summaries["generate"]["mean"], "update": summaries["update"]["mean"]}
    if "save" in summaries:
        # A save happens every save_interval steps: spread its time over all steps for the share.
        means["save"] = summaries["save"]["mean"] * summaries["save"]["n"] / max(summaries["update"]["n"], 1)
    total = sum(means.values())
    if step_wall and step_wall >= total:
        shares = {k: v / step_wall for k, v in means.items()}
        shares["other"] = max(0.0, 1.0 - sum(shares.values()))
        return shares
    return {k: v / total for k, v in means.items()} if total > 0 else {"rollout": 0.0, "update": 0.0}
