"""Versioned pydantic contracts: JSON on every boundary."""

from rlinf_bench.contracts.checkpoint import CheckpointLayout, CheckpointRef
from rlinf_bench.contracts.origin import RequestOrigin
from rlinf_bench.contracts.probes import (
    Measurement,
    ProbeEnvironment,
    ProbeName,
    ProbeResult,
    ProbeVerdict,
    Target,
)
from rlinf_bench.contracts.report import (
    AdaptiveStatus,
    CheckpointReport,
    Disagreement,
    InfraCheck,
    ProvenanceChange,
    RunSummary,
    StateEpisode,
    StateFlip,
    StateOutcome,
    SuiteReport,
    TaskSummary,
    Verdict,
    VerdictValue,
)
from rlinf_bench.contracts.request import (
    EvalMatrix,
    EvalRequest,
    EvalRun,
    JobSettings,
    KueueSettings,
    ProbeSpec,
    Resources,
    SuiteSelection,
    Toleration,
    request_id_for,
)
from rlinf_bench.contracts.results import (
    EpisodeResult,
    Provenance,
    RunResult,
    RunStatus,
    TaskResult,
    Timings,
)
from rlinf_bench.contracts.robustness import AXES, FailureReason, Perturbation, PerturbationAxis
from rlinf_bench.contracts.versioned import Contract, describe_validation_error, dumps_schema, json_schema_of

__all__ = [
    "AXES",
    "AdaptiveStatus",
    "CheckpointLayout",
    "CheckpointRef",
    "CheckpointReport",
    "Contract",
    "Disagreement",
    "EpisodeResult",
    "EvalMatrix",
    "EvalRequest",
    "EvalRun",
    "FailureReason",
    "InfraCheck",
    "JobSettings",
    "KueueSettings",
    "Measurement",
    "Perturbation",
    "PerturbationAxis",
    "ProbeEnvironment",
    "ProbeName",
    "ProbeResult",
    "ProbeSpec",
    "ProbeVerdict",
    "Provenance",
    "ProvenanceChange",
    "RequestOrigin",
    "Resources",
    "RunResult",
    "RunStatus",
    "RunSummary",
    "StateEpisode",
    "StateFlip",
    "StateOutcome",
    "SuiteReport",
    "SuiteSelection",
    "Target",
    "TaskResult",
    "TaskSummary",
    "Timings",
    "Toleration",
    "Verdict",
    "VerdictValue",
    "describe_validation_error",
    "dumps_schema",
    "json_schema_of",
    "request_id_for",
]

# Contracts whose JSON Schema is published in docs/schemas/ (see `rlinf-bench schemas`).
PUBLISHED: dict[str, type[Contract]] = {
    "checkpoint-ref": CheckpointRef,
    "eval-request": EvalRequest,
    "eval-run": EvalRun,
    "run-result": RunResult,
    "probe-result": ProbeResult,
    "checkpoint-report": CheckpointReport,
}
