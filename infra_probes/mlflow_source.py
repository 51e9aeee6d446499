"""Read a training run's metric histories from MLflow, for the throughput probe and the gpu probe's MLflow mode.

The client is injected (anything with ``get_run`` and ``get_metric_history``), so tests use a real
local store and production a tracking server; nothing here knows which.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from rlinf_bench.errors import ProbeError, ProbeUnavailableError

GENERATE = "timing/generate"
UPDATE = "timing/update"
SAVE = "timing/save"
GPU_UTIL_RE = re.compile(r"^system/gpu_(\d+)_utilization_percentage$")
GPU_MEM_PCT = "system/gpu_{i}_memory_usage_percentage"


class MetricClient(Protocol):
    def get_run(self, run_id: str) -> Any: ...

    def get_metric_history(self, run_id: str, key: str) -> list[Any]: ...

    def get_experiment_by_name(self, name: str) -> Any: ...

    def search_runs(self, experiment_ids: list[str], *, order_by: list[str], max_results: int) -> Any: ...


@dataclass(frozen=True)
class Point:
    """One logged value: wall time (s since epoch), step, value."""

    t: float
    step: int
    value: float


class TrainingRunSettings(BaseModel):
    """The settings the gpu and throughput probes share: the training run whose MLflow metrics they read
    (:func:`settings_from_args`), and the instance type their result records."""

    model_config = ConfigDict(extra="forbid")

    run_id: str | None = None
    experiment: str | None = None
    tracking_uri: str | None = None
    generate_metric: str = GENERATE
    update_metric: str = UPDATE
    save_metric: str = SAVE
    instance_type: str | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--experiment", help="MLflow experiment name: read its most recently started run")
    parser.add_argument("--tracking-uri", help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI)")
    parser.add_argument("--generate-metric", default=GENERATE, help="rollout phase duration metric (s)")
    parser.add_argument("--update-metric", default=UPDATE, help="policy update duration metric (s)")
    parser.add_argument("--save-metric", default=SAVE, help="checkpoint save duration metric (s)")


def settings_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The MLflow-source settings (and --run-id, --instance-type) shared by the gpu and throughput probes."""
    names = ("run_id", "experiment", "tracking_uri", "generate_metric", "update_metric", "save_metric", "instance_type")
    return {name: getattr(args, name) for name in names}


def open_client(tracking_uri: str | None) -> MetricClient:
    """An MlflowClient for ``tracking_uri``; a missing mlflow package means nothing can be read here."""
    try:
        from mlflow.tracking import MlflowClient
    except ImportError as exc:
        raise ProbeUnavailableError("reading MLflow runs needs mlflow (or mlflow-skinny); pip install mlflow") from exc
    client: MetricClient = MlflowClient(tracking_uri=tracking_uri)
    return client


def resolve_run(client: MetricClient, run_id: str | None, experiment: str | None) -> str:
    """``run_id`` as given, else the most recently started run of ``experiment``."""
    if run_id:
        return run_id
    if not experiment:
        raise ProbeError("name the training run: pass --run-id RUN_ID or --experiment NAME")
    try:
        exp = client.get_experiment_by_name(experiment)
    except Exception as exc:  # a dead tracking server
        raise ProbeError(f"MLflow experiment {experiment!r} cannot be read: {str(exc).splitlines()[0]}") from exc
    if exp is None:
        raise ProbeError(f"no MLflow experiment named {experiment!r}; check --experiment and --tracking-uri")
    runs = client.search_runs([exp.experiment_id], order_by=["attributes.start_time DESC"], max_results=1)
    if not runs:
        raise ProbeUnavailableError(f"MLflow experiment {experiment!r} has no runs yet")
    latest: str = runs[0].info.run_id
    return latest


def metric_keys(client: MetricClient, run_id: str) -> list[str]:
    """Names of the metrics a run logged; an unknown run id is bad input (fail), not a missing feature."""
    try:
        run = client.get_run(run_id)
    except Exception as exc:  # MlflowException for unknown ids, connection errors for a dead server
        raise ProbeError(
            f"MLflow run {run_id!r} cannot be read: {str(exc).splitlines()[0]}; check --run-id and --tracking-uri"
        ) from exc
    return sorted(run.data.metrics)


def history(client: MetricClient, run_id: str, key: str) -> list[Point]:
    """All values of ``key`` in time order (MLflow timestamps are milliseconds)."""
    points = [
        Point(t=p.timestamp / 1000.0, step=int(p.step), value=float(p.value))
        for p in client.get_metric_history(run_id, key)
    ]
    return sorted(points, key=lambda p: (p.t, p.step))


def require(keys: list[str], wanted: list[str], run_id: str, hint: str) -> None:
    """Raise not_available naming the missing metrics (and what the run does have)."""
    missing = [k for k in wanted if k not in keys]
    if missing:
        have = ", ".join(keys[:12]) + (" ..." if len(keys) > 12 else "") if keys else "no metrics at all"
        raise ProbeUnavailableError(f"MLflow run {run_id} has no {', '.join(missing)} (it has: {have}); {hint}")


def by_step(points: list[Point]) -> dict[int, Point]:
    """Last value logged for each step."""
    out: dict[int, Point] = {}
    for p in points:
        out[p.step] = p
    return out


def gpu_indices(keys: list[str]) -> list[int]:
    """GPU indices that MLflow's system-metrics monitor logged utilization for."""
    return sorted(int(mt.group(1)) for k in keys if (mt := GPU_UTIL_RE.match(k)))
