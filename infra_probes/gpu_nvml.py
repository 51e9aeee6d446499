"""One GPU's NVML sampling: utilization, GPM SM/tensor/DRAM activity, memory, power, clocks and health.

Every NVML call that a GPU or driver may not support is guarded: an unsupported counter leaves its
series empty (and the value out of the result) instead of failing the probe.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("infra_probes")

# Xid codes treated as fatal by the EKS node monitoring agent (REFERENCE.md section 5).
FATAL_XIDS = frozenset({46, 48, 54, 62, 63, 64, 74, 79, 95, 109, 110, 119, 120, 136, 140, 142, 143, 151, 155, 156, 158})


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class DeviceSampler:
    """Collects one device's samples between ``start`` and ``finish``."""

    def __init__(self, nvml: Any, index: int) -> None:
        self.nvml = nvml
        self.index = index
        self.handle = nvml.nvmlDeviceGetHandleByIndex(index)
        self.series: dict[str, list[float]] = {}
        self.xids: list[int] = []
        self._gpm_prev: Any = None
        self._events: Any = None
        self.gpm_supported = self._gpm_support()

    def _call(self, name: str, *args: Any) -> Any:
        try:
            return getattr(self.nvml, name)(*args)
        except self.nvml.NVMLError as exc:
            log.debug("GPU %d: %s not available: %s", self.index, name, exc)
            return None
        except AttributeError:  # older nvidia-ml-py without this function
            return None

    def _gpm_support(self) -> bool:
        support = self._call("nvmlGpmQueryDeviceSupport", self.handle)
        return bool(support is not None and support.isSupportedDevice)

    def start(self) -> None:
        if self.gpm_supported:
            self._gpm_prev = self._gpm_sample()
        events = self._call("nvmlEventSetCreate")
        if events is not None:
            registered = self._call(
                "nvmlDeviceRegisterEvents", self.handle, self.nvml.nvmlEventTypeXidCriticalError, events
            )
            # nvmlDeviceRegisterEvents returns None on success too: probe with a zero-timeout wait below.
            self._events = events if registered is None else None

    def _add(self, key: str, value: float | None) -> None:
        if value is not None:
            self.series.setdefault(key, []).append(float(value))

    def _gpm_sample(self) -> Any:
        sample = self._call("nvmlGpmSampleAlloc")
        if sample is None or self._call("nvmlGpmSampleGet", self.handle, sample) is None:
            self.gpm_supported = False
            return None
        return sample

    def sample(self) -> None:
        nvml, h = self.nvml, self.handle
        util = self._call("nvmlDeviceGetUtilizationRates", h)
        if util is not None:
            self._add("util_pct", util.gpu)
            self._add("memctrl_busy_pct", util.memory)
        mem = self._call("nvmlDeviceGetMemoryInfo", h)
        if mem is not None and mem.total:
            self._add("memory_used_pct", 100.0 * mem.used / mem.total)
            self._add("memory_used_gb", mem.used / 1e9)
        power = self._call("nvmlDeviceGetPowerUsage", h)
        self._add("power_w", power / 1000.0 if power is not None else None)
        self._add("sm_clock_mhz", self._call("nvmlDeviceGetClockInfo", h, nvml.NVML_CLOCK_SM))
        self._add("temperature_c", self._call("nvmlDeviceGetTemperature", h, nvml.NVML_TEMPERATURE_GPU))
        if self.gpm_supported and self._gpm_prev is not None:
            self._gpm_metrics()
        self._drain_xids()

    def _gpm_metrics(self) -> None:
        nvml = self.nvml
        current = self._gpm_sample()
        if current is None:
            return
        wanted = {
            "sm_active_pct": nvml.NVML_GPM_METRIC_SM_UTIL,
            "tensor_active_pct": nvml.NVML_GPM_METRIC_ANY_TENSOR_UTIL,
            "dram_bw_pct": nvml.NVML_GPM_METRIC_DRAM_BW_UTIL,
        }
        request = nvml.c_nvmlGpmMetricsGet_t()
        request.version = nvml.NVML_GPM_METRICS_GET_VERSION
        request.numMetrics = len(wanted)
        request.sample1 = self._gpm_prev
        request.sample2 = current
        for slot, metric_id in enumerate(wanted.values()):
            request.metrics[slot].metricId = metric_id
        if self._call("nvmlGpmMetricsGet", request) is not None:
            for slot, key in enumerate(wanted):
                if request.metrics[slot].nvmlReturn == nvml.NVML_SUCCESS:
                    self._add(key, request.metrics[slot].value)
        self._call("nvmlGpmSampleFree", self._gpm_prev)
        self._gpm_prev = current

    def _drain_xids(self) -> None:
        if self._events is None:
            return
        for _ in range(64):
            try:
                data = self.nvml.nvmlEventSetWait(self._events, 0)
            except self.nvml.NVMLError:
                return  # timeout: no pending event (or events unsupported)
            self.xids.append(int(data.eventData))

    def finish(self) -> dict[str, Any]:
        """This device's series plus identity and health."""
        if self._gpm_prev is not None:
            self._call("nvmlGpmSampleFree", self._gpm_prev)
            self._gpm_prev = None
        if self._events is not None:
            self._call("nvmlEventSetFree", self._events)
            self._events = None
        return {
            "index": self.index,
            "name": _text(self._call("nvmlDeviceGetName", self.handle) or ""),
            "uuid": _text(self._call("nvmlDeviceGetUUID", self.handle) or ""),
            "gpm_supported": self.gpm_supported,
            "series": self.series,
            "health": self.health(),
        }

    def health(self) -> dict[str, Any]:
        """ECC errors, retired pages / remapped rows and Xid events; ``problems`` lists what fails a node."""
        nvml, h = self.nvml, self.handle
        out: dict[str, Any] = {"xids": self.xids, "problems": []}
        fatal = sorted({x for x in self.xids if x in FATAL_XIDS})
        if fatal:
            out["problems"].append(f"GPU {self.index}: fatal Xid {fatal} during the window")
        unc = self._call(
            "nvmlDeviceGetTotalEccErrors", h, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC
        )
        out["ecc_uncorrected_volatile"] = unc
        out["ecc_uncorrected_aggregate"] = self._call(
            "nvmlDeviceGetTotalEccErrors", h, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_AGGREGATE_ECC
        )
        if unc:
            out["problems"].append(f"GPU {self.index}: {unc} uncorrected ECC errors since the last reset")
        rows = self._call("nvmlDeviceGetRemappedRows", h)
        if rows is not None:
            corr, uncorr, pending, failure = rows
            out["remapped_rows"] = {
                "correctable": corr,
                "uncorrectable": uncorr,
                "pending": pending,
                "failure": failure,
            }
            if failure:
                out["problems"].append(f"GPU {self.index}: row remapping failed (replace the GPU)")
            elif pending:
                out["problems"].append(f"GPU {self.index}: row remapping pending (reset the GPU)")
        pending_pages = self._call("nvmlDeviceGetRetiredPagesPendingStatus", h)
        out["retired_pages_pending"] = pending_pages
        if pending_pages:
            out["problems"].append(f"GPU {self.index}: retired pages pending (reset the GPU)")
        return out
