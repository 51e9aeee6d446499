"""Baselines registry: published success rates, the brief's hardware table and infrastructure targets.

Every entry carries its source. Look baselines up by name (``get_baseline("libero/openvla-oft-rlinf")``);
an unknown name raises :class:`rlinf_bench.errors.UnknownBaselineError` with the closest matches.
"""

from rlinf_bench.baselines.probe_targets import KNOWN_PROBES, infra_target, nccl_instance_types
from rlinf_bench.baselines.published import (
    Baseline,
    HardwareTable,
    PublishedBest,
    all_baselines,
    baseline_names,
    baselines_for_suite,
    best_published,
    get_baseline,
    get_baselines,
    get_table,
    protocol_notes,
    table_names,
)

__all__ = [
    "KNOWN_PROBES",
    "Baseline",
    "HardwareTable",
    "PublishedBest",
    "all_baselines",
    "baseline_names",
    "baselines_for_suite",
    "best_published",
    "get_baseline",
    "get_baselines",
    "get_table",
    "infra_target",
    "nccl_instance_types",
    "protocol_notes",
    "table_names",
]
