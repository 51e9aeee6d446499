"""The probes' public Python API: the measurements a script may reuse without running a probe.

Everything else in ``infra_probes`` is internal (docs/architecture.md, "Public entry points"); the probes
themselves are run as ``python -m infra_probes PROBE`` or ``rlinf-bench probe PROBE``. bench/ imports the
probes through this module only; import-linter checks it.

- The storage probe's timed loops: :func:`write_timed` and :func:`read_timed` (O_DIRECT blocks, fsync).
- The gpu probe's sampler: :func:`load_nvml` (NVML through pynvml, or an error naming the fix) and
  :class:`DeviceSampler` (utilization, SM and tensor activity from GPM, memory, power of one device).
"""

from __future__ import annotations

from infra_probes.gpu import load_nvml
from infra_probes.gpu_nvml import DeviceSampler
from infra_probes.storage import read_timed, write_timed

__all__ = ["DeviceSampler", "load_nvml", "read_timed", "write_timed"]
