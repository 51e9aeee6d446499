"""Targets that infrastructure probes are judged against, each carrying its source."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.contracts import ProbeName, Target
from rlinf_bench.errors import ConfigError, UnknownBaselineError
from rlinf_bench.registry import unknown_name

# Probes that exist; some (throughput) have no fixed target: "depends on batch size and envs" in the brief.
KNOWN_PROBES = tuple(name.value for name in ProbeName)


@cache
def _infra_data() -> dict[str, Any]:
    text = resources.files("rlinf_bench.data.baselines").joinpath("infra.yaml").read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def nccl_instance_types() -> list[str]:
    """Instance types with an NCCL bus-bandwidth target."""
    return sorted(_infra_data()["nccl_busbw_gbps"])


def infra_target(
    probe: str,
    metric: str,
    *,
    instance_type: str | None = None,
    fs_capacity_tib: float | None = None,
    fs_tier_mb_s_per_tib: float | None = None,
    nodes: int | None = None,
) -> Target | None:
    """The target a probe's measurement is judged against, or None when no target applies.

    - gpu: ``util_update_pct`` > 70, ``memory_used_pct`` > 80 (used/total memory).
    - nccl: ``busbw_gbps`` at 1 GiB by ``instance_type``; inter-node unless ``nodes == 1`` (intra-node
      NVLink ring). Unknown instance types have no target (None): a made-up threshold would be worse.
    - storage: ``write_mb_s`` / ``read_mb_s`` > 500, or > capacity (TiB) x tier (MB/s/TiB) when both are
      given, because an FSx for Lustre file system cannot exceed its provisioned throughput.
    - checkpoint_io: ``save_s`` / ``load_s`` < 60.

    An unknown probe name raises :class:`UnknownBaselineError`; a known probe with a metric that has no
    target returns None.
    """
    if probe not in KNOWN_PROBES:
        raise unknown_name("probe", probe, KNOWN_PROBES, error=UnknownBaselineError)
    if probe == "nccl":
        return _nccl_target(metric, instance_type, nodes)
    if probe == "storage" and (fs_capacity_tib is not None or fs_tier_mb_s_per_tib is not None):
        return _storage_target(metric, fs_capacity_tib, fs_tier_mb_s_per_tib)
    for row in _infra_data()["targets"]:
        if row["probe"] == probe and row["metric"] == metric:
            return Target(
                metric=metric, op=row["op"], value=float(row["value"]), unit=row["unit"], source=row["source"]
            )
    return None


def _nccl_target(metric: str, instance_type: str | None, nodes: int | None) -> Target | None:
    if metric != "busbw_gbps" or instance_type is None:
        return None
    by_type = _infra_data()["nccl_busbw_gbps"].get(instance_type)
    if by_type is None:
        return None
    scope = "intra_node" if nodes == 1 else "inter_node"
    row = by_type.get(scope)
    if row is None:
        return None
    source = (
        f"{instance_type} {scope.replace('_', '-')} all-reduce busbw at 1 GiB (reference {row['reference']} GB/s): "
    )
    return Target(metric=metric, op=row["op"], value=float(row["value"]), unit="GB/s", source=source + row["source"])


def _storage_target(metric: str, capacity_tib: float | None, tier: float | None) -> Target | None:
    if metric not in ("write_mb_s", "read_mb_s"):
        return None
    if capacity_tib is None or tier is None:
        raise ConfigError(
            "storage target needs both fs_capacity_tib and fs_tier_mb_s_per_tib (FSx throughput = capacity x tier); "
            f"got capacity={capacity_tib}, tier={tier}. Give both, or neither for the default 500 MB/s"
        )
    if capacity_tib <= 0 or tier <= 0:
        raise ConfigError(f"storage capacity ({capacity_tib} TiB) and tier ({tier} MB/s/TiB) must be positive")
    value = capacity_tib * tier
    return Target(
        metric=metric,
        op=">",
        value=value,
        unit="MB/s",
        source=(
            f"FSx for Lustre provisioned throughput = {capacity_tib:g} TiB x {tier:g} MB/s/TiB = {value:g} MB/s "
            "(AWS FSx for Lustre performance documentation)"
        ),
    )


class VerdictSize(BaseModel):
    """The smallest run of a probe whose figure answers its target's question (``infra.yaml`` ``verdict_sizes``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    probe: str
    setting: str = Field(description="The key in ProbeResult.settings that sizes the run")
    at_least: float
    unit: Literal["bytes", "parameters"]
    flag: str = Field(description="The probe option that gives a large enough run")
    why: str


def verdict_size(probe: str) -> VerdictSize | None:
    """How big a run of ``probe`` must be for its verdict to mean what the target says; None: any size does."""
    for row in _infra_data().get("verdict_sizes", []):
        if row["probe"] == probe:
            return VerdictSize.model_validate(row)
    return None
