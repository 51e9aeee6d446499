"""The GPUs a Job sees, through NVML: the :class:`rlinf_bench.ports.GpuDescriber` the Jobs pass to provenance."""

from __future__ import annotations

from typing import Any

__all__ = ["NvmlGpus"]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class NvmlGpus:
    """Visible GPUs as ``"<name> (<memory> MiB, driver <v>)"``; empty without NVML or NVIDIA GPUs (never raises)."""

    def visible_gpus(self) -> list[str]:
        try:
            import pynvml
        except ImportError:
            return []
        try:
            pynvml.nvmlInit()
        except Exception:  # NVMLError_LibraryNotFound / DriverNotLoaded on CPU boxes
            return []
        try:
            driver = _text(pynvml.nvmlSystemGetDriverVersion())
            out = []
            for i in range(pynvml.nvmlDeviceGetCount()):
                handle = pynvml.nvmlDeviceGetHandleByIndex(i)
                name = _text(pynvml.nvmlDeviceGetName(handle))
                mem = pynvml.nvmlDeviceGetMemoryInfo(handle).total // 2**20
                out.append(f"{name} ({mem} MiB, driver {driver})")
            return out
        except Exception:  # a GPU that fell off the bus mid-query: provenance never fails a run
            return []
        finally:
            pynvml.nvmlShutdown()
