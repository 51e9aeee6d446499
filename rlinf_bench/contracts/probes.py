"""What an infrastructure probe measured, against which target, with what verdict."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.contracts.limits import Message, Name
from rlinf_bench.contracts.versioned import Contract


class ProbeName(StrEnum):
    """The infrastructure probes (the brief's checks): each has an ``infra_probes`` command, a Job and targets."""

    GPU = "gpu"
    NCCL = "nccl"
    STORAGE = "storage"
    CHECKPOINT_IO = "checkpoint_io"
    THROUGHPUT = "throughput"
    SIM_CANARY = "sim_canary"


#: Probes that run only when a request lists them. sim_canary plays LIBERO, so its Job needs the eval image
#: and a node slot for a few minutes; a request that evaluates no LIBERO suite gets nothing from it
#: (docs/probes.md, "sim_canary").
OPT_IN_PROBES = frozenset({ProbeName.SIM_CANARY})
#: Probes whose Job runs in the eval image (the probe image has no simulator).
EVAL_IMAGE_PROBES = frozenset({ProbeName.SIM_CANARY})


#: The arguments a probe cannot start without, as groups of alternatives (one of each group must be in its
#: ``args``), with what to pass. Kept next to ProbeName so the Plan state refuses a probe that could not
#: start before any Job runs; tests/unit/infra_probes checks it against the probes' own parsers.
PROBE_REQUIRED_ARGS: dict[ProbeName, tuple[tuple[tuple[str, ...], str], ...]] = {
    ProbeName.GPU: (),
    ProbeName.NCCL: (),
    ProbeName.STORAGE: ((("--path",), "the directory to measure, e.g. --path /fsx"),),
    ProbeName.CHECKPOINT_IO: ((("--path",), "the checkpoint directory, e.g. --path /fsx/ckpt"),),
    ProbeName.THROUGHPUT: (
        (("--run-id", "--experiment"), "the training run, e.g. --experiment my-rlinf-run or --run-id RUN_ID"),
    ),
    ProbeName.SIM_CANARY: (),
}


def missing_probe_args(name: ProbeName, args: list[str]) -> list[str]:
    """The required argument groups of probe ``name`` that ``args`` lacks, each as 'OPTION (what to pass)'."""
    given = {arg.split("=", 1)[0] for arg in args}
    return [
        f"{' or '.join(options)} ({hint})"
        for options, hint in PROBE_REQUIRED_ARGS[name]
        if not given.intersection(options)
    ]


class ProbeVerdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    NOT_AVAILABLE = "not_available"


class Measurement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: float
    unit: Name


class Target(BaseModel):
    """A threshold a measurement is judged against."""

    model_config = ConfigDict(extra="forbid")

    metric: Name = Field(description="Key into ProbeResult.values")
    op: Literal[">", ">=", "<", "<="]
    value: float
    unit: Name
    source: Name = Field(default="", description="Where the target comes from (baseline name, brief, default)")


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


class SimCanaryDetails(BaseModel):
    """``ProbeResult.details`` of the simulator canary (``sim_canary``), as the report reads it.

    The details are free-form for the other probes; the canary's are read field by field, so they are
    validated here first: a result whose details have another shape is stated as unreadable instead of
    stopping the checkpoint's report (:mod:`rlinf_bench.reporting.canary`).
    """

    model_config = ConfigDict(extra="allow")

    summary: str = ""
    moved: list[str] = Field(default_factory=list, description="One line per episode that differs from the reference")
    versions_here: dict[str, str] = Field(default_factory=dict, description="Simulator packages of this run")
    versions_reference: dict[str, str] = Field(default_factory=dict, description="Those of the reference")
    episodes: int | None = Field(default=None, ge=0, description="Canary episodes played")


class ProbeResult(Contract):
    probe: Name
    values: dict[Name, Measurement] = Field(default_factory=dict, max_length=1000)
    target: Target | None = None
    verdict: ProbeVerdict
    reason: Message = Field(default="", description="Why the verdict is fail or not_available")
    settings: dict[str, Any] = Field(default_factory=dict, description="Parameters the probe ran with")
    details: dict[str, Any] = Field(default_factory=dict, description="Tables, per-size rows, samples")
    environment: ProbeEnvironment = Field(default_factory=ProbeEnvironment)
    started_at: str = ""
    wall_s: float = 0.0
