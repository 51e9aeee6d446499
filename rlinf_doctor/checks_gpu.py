"""The GPU: NVML present, the driver, and GPM (SM / tensor activity) for the gpu probe."""

from __future__ import annotations

from typing import Any

from rlinf_bench.doctor.context import DoctorContext
from rlinf_bench.doctor.model import CheckResult, Target

NO_GPU_FIX = (
    "run on a GPU node with the NVIDIA driver; in Kubernetes request nvidia.com/gpu and schedule on the GPU "
    "node group (the probe Jobs of rlinf-bench render-jobs do both)"
)


def check_gpu(ctx: DoctorContext) -> list[CheckResult]:
    """NVML answers, with the driver version and each GPU; GPM support per GPU."""
    try:
        import pynvml
    except ImportError:
        return [
            ctx.problem("gpu.nvml", "nvidia-ml-py (pynvml) is not installed", "pip install -e '.[probes]'"),
            ctx.skip("gpu.driver", "no NVML"),
            ctx.skip("gpu.gpm", "no NVML"),
        ]
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound / DriverNotLoaded / NoPermission
        measured = f"NVML unavailable ({exc}): no NVIDIA driver or GPU visible here"
        first = (
            ctx.problem("gpu.nvml", measured, NO_GPU_FIX)
            if ctx.target is Target.PROBE
            else ctx.skip("gpu.nvml", measured + "; evaluation runs on the CPU (slower)", NO_GPU_FIX)
        )
        return [first, ctx.skip("gpu.driver", "no NVML"), ctx.skip("gpu.gpm", "no NVML")]
    try:
        return _inspect(ctx, pynvml)
    finally:
        pynvml.nvmlShutdown()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _inspect(ctx: DoctorContext, pynvml: Any) -> list[CheckResult]:
    count = pynvml.nvmlDeviceGetCount()
    if count == 0:
        return [
            ctx.problem("gpu.nvml", "NVML runs but sees no GPU", NO_GPU_FIX),
            ctx.skip("gpu.driver", "no GPU"),
            ctx.skip("gpu.gpm", "no GPU"),
        ]
    names = []
    gpm: list[bool] = []
    for i in range(count):
        handle = pynvml.nvmlDeviceGetHandleByIndex(i)
        mem = pynvml.nvmlDeviceGetMemoryInfo(handle).total // 2**20
        names.append(f"{i}: {_text(pynvml.nvmlDeviceGetName(handle))} ({mem} MiB)")
        try:
            gpm.append(bool(pynvml.nvmlGpmQueryDeviceSupport(handle).isSupportedDevice))
        except Exception:  # older drivers / bindings: no GPM query at all
            gpm.append(False)
    driver = _text(pynvml.nvmlSystemGetDriverVersion())
    try:
        cuda = pynvml.nvmlSystemGetCudaDriverVersion_v2()
        cuda_text = f", CUDA {cuda // 1000}.{cuda % 1000 // 10}"
    except Exception:  # the binding may lack the call
        cuda_text = ""
    results = [
        ctx.ok("gpu.nvml", f"{count} GPU(s): {'; '.join(names)}", gpus=names),
        ctx.ok("gpu.driver", f"NVIDIA driver {driver}{cuda_text}", driver=driver),
    ]
    if all(gpm):
        results.append(ctx.ok("gpu.gpm", f"GPM supported on all {count} GPU(s): SM and tensor activity measurable"))
    else:
        missing = [i for i, ok in enumerate(gpm) if not ok]
        results.append(
            ctx.warn(
                "gpu.gpm",
                f"no GPM on GPU(s) {missing}: the gpu probe falls back to NVML utilization, which reads 100 % "
                "while any kernel runs",
                "GPM needs Hopper or newer and a recent driver; judge GPU efficiency with care on these GPUs",
            )
        )
    return results
