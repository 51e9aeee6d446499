"""What an infrastructure probe measured, against which target, with what verdict."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.contracts.versioned import Contract


class ProbeName(StrEnum):
    """The infrastructure probes (the brief's checks): each has an ``infra_probes`` command, a Job and targets."""

    GPU = "gpu"
    NCCL = "nccl"
    STORAGE = "storage"
    CHECKPOINT_IO = "checkpoint_io"
    THROUGHPUT = "throughput"


class ProbeVerdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    NOT_AVAILABLE = "not_available"


class Measurement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: float
    unit: str


class Target(BaseModel):
    """A threshold a measurement is judged against."""

    model_config = ConfigDict(extra="forbid")

    metric: str = Field(description="Key into ProbeResult.values")
    op: Literal[">", ">=", "<", "<="]
    value: float
    unit: str
    source: str = Field(default="", description="Where the target comes from (baseline name, brief, default)")


class ProbeEnvironment(BaseModel):
    model_config = ConfigDict(extra="allow")

    instance_type: str | None = None
    host: str | None = None
    gpu_model: str | None = None
    gpu_count: int | None = None
    driver: str | None = None
    cuda: str | None = None
    nccl_version: str | None = None
    torch: str | None = None
    fs_type: str | None = None
    fs_path: str | None = None
    fs_capacity_bytes: int | None = None


class ProbeResult(Contract):
    probe: str
    values: dict[str, Measurement] = Field(default_factory=dict)
    target: Target | None = None
    verdict: ProbeVerdict
    reason: str = Field(default="", description="Why the verdict is fail or not_available")
    settings: dict[str, Any] = Field(default_factory=dict, description="Parameters the probe ran with")
    details: dict[str, Any] = Field(default_factory=dict, description="Tables, per-size rows, samples")
    environment: ProbeEnvironment = Field(default_factory=ProbeEnvironment)
    started_at: str = ""
    wall_s: float = 0.0
