"""GPU probe: sample NVML over a window (live mode), or read a training run from MLflow (``--run-id``).

Why GPM: NVML's "utilization" is the share of time ANY kernel runs, so a GPU spinning one small
kernel (an NCCL all-reduce, a memcpy) reads 100 %. On Hopper, NVML's GPM metrics give SM activity
(share of SMs busy), tensor-core activity and DRAM bandwidth: those say whether the GPU works.
The verdict uses SM activity where the GPU supports GPM, NVML utilization otherwise (and says so).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from pydantic import Field

from infra_probes import mlflow_source
from infra_probes.common import Outcome, extra_check, m
from infra_probes.environment import detect_environment
from infra_probes.targets import resolve_target
from rlinf_bench.contracts import ProbeEnvironment, Target
from rlinf_bench.errors import ConfigError, ProbeUnavailableError

BRIEF_UTIL = 70.0


class GpuSettings(mlflow_source.TrainingRunSettings):
    window_s: float = Field(default=10.0, gt=0)
    interval_s: float = Field(default=1.0, ge=0.1, description="GPM needs >= 100 ms between samples")
    devices: list[int] | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--window-s", type=float, default=10.0, help="live mode: seconds to sample")
    parser.add_argument("--interval-s", type=float, default=1.0, help="live mode: seconds between samples")
    parser.add_argument("--devices", help="live mode: comma-separated GPU indices (default: all)")
    parser.add_argument("--run-id", help="MLflow mode: training run whose system metrics and timings to read")
    mlflow_source.add_arguments(parser)


def settings_from_args(args: argparse.Namespace) -> GpuSettings:
    try:
        devices = [int(d) for d in args.devices.split(",")] if args.devices else None
    except ValueError as exc:
        raise ConfigError(f"--devices {args.devices!r} must be comma-separated GPU indices, e.g. 0,1") from exc
    return GpuSettings(
        window_s=args.window_s,
        interval_s=args.interval_s,
        devices=devices,
        **mlflow_source.settings_from_args(args),
    )


def environment(settings: GpuSettings) -> ProbeEnvironment:
    live = settings.run_id is None and settings.experiment is None
    return detect_environment(instance_type=settings.instance_type, with_gpu=live)


def measure(settings: GpuSettings) -> Outcome:
    if settings.run_id or settings.experiment:
        from infra_probes.gpu_mlflow import measure_from_mlflow

        client = mlflow_source.open_client(settings.tracking_uri)
        return measure_from_mlflow(
            mlflow_source.resolve_run(client, settings.run_id, settings.experiment),
            client,
            generate_metric=settings.generate_metric,
            update_metric=settings.update_metric,
            save_metric=settings.save_metric,
            instance_type=settings.instance_type,
        )
    return measure_live(settings, load_nvml())


def load_nvml() -> Any:
    """Import and initialise NVML; no package, no driver or no GPU means not_available, never a crash."""
    try:
        import pynvml
    except ImportError as exc:
        raise ProbeUnavailableError("nvidia-ml-py is not installed; pip install 'rlinf-bench[probes]'") from exc
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound / DriverNotLoaded / ...: no usable GPU here
        raise ProbeUnavailableError(f"no NVIDIA GPU or driver here: NVML did not start ({exc})") from exc
    if pynvml.nvmlDeviceGetCount() == 0:
        pynvml.nvmlShutdown()
        raise ProbeUnavailableError("NVML started but sees no GPU; check the pod's nvidia.com/gpu request")
    return pynvml


def measure_live(settings: GpuSettings, nvml: Any) -> Outcome:
    """Sample every ``interval_s`` for ``window_s``; judge SM activity (or NVML utilization without GPM)."""
    from infra_probes.gpu_nvml import DeviceSampler

    try:
        count = nvml.nvmlDeviceGetCount()
        indices = settings.devices if settings.devices is not None else list(range(count))
        bad = [i for i in indices if not 0 <= i < count]
        if bad:
            raise ConfigError(f"--devices {bad} do not exist: this machine has GPUs 0..{count - 1}")
        samplers = [DeviceSampler(nvml, i) for i in indices]
        deadline = time.monotonic() + settings.window_s
        for s in samplers:
            s.start()
        while True:
            time.sleep(settings.interval_s)
            for s in samplers:
                s.sample()
            if time.monotonic() >= deadline:
                break
        per_device = [s.finish() for s in samplers]
    finally:
        nvml.nvmlShutdown()
    return _outcome(per_device, settings)


def _mean(per_device: list[dict[str, Any]], key: str) -> float | None:
    samples = [v for d in per_device for v in d["series"].get(key, [])]
    return statistics.fmean(samples) if samples else None


def _outcome(per_device: list[dict[str, Any]], settings: GpuSettings) -> Outcome:
    units = {
        "util_pct": "%",
        "memctrl_busy_pct": "%",
        "sm_active_pct": "%",
        "tensor_active_pct": "%",
        "dram_bw_pct": "%",
        "memory_used_pct": "%",
        "memory_used_gb": "GB",
        "power_w": "W",
        "sm_clock_mhz": "MHz",
    }
    values = {k: m(v, u) for k, u in units.items() if (v := _mean(per_device, k)) is not None}
    gpm = all(d["gpm_supported"] for d in per_device)
    metric = "sm_active_pct" if gpm and "sm_active_pct" in values else "util_pct"
    default = Target(
        metric=metric,
        op=">",
        value=BRIEF_UTIL,
        unit="%",
        source=(
            "brief: GPU utilization > 70 %, judged on SM activity (NVML utilization counts any running kernel)"
            if metric == "sm_active_pct"
            else "brief: GPU utilization > 70 % (NVML utilization: this GPU has no GPM SM activity)"
        ),
    )
    target = resolve_target("gpu", metric, default, instance_type=settings.instance_type)
    mem_target = resolve_target(
        "gpu",
        "memory_used_pct",
        Target(metric="memory_used_pct", op=">", value=80.0, unit="%", source="brief: memory > 80 % (used/total)"),
    )
    checks = extra_check(values, mem_target)
    details = {"mode": "live", "gpm_supported": gpm, "devices": per_device, "checks": checks}
    outcome = Outcome(values=values, target=target, details=details)
    problems = [p for d in per_device for p in d["health"]["problems"]]
    if problems:
        outcome.forced_fail = "unhealthy GPU: " + "; ".join(problems)
    if not gpm:
        outcome.note = "no GPM on this GPU (pre-Hopper or unsupported driver): NVML utilization overstates SM work"
    return outcome
