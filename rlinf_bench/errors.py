"""One base exception for the project, with specific subclasses.

Every error a user can cause says which input was wrong and how to fix it; callers catch these
types (never match on message text) to decide between retry, dead-letter and fail.
"""

from __future__ import annotations

from rlinf_bench.redaction import redact

__all__ = [
    "CheckpointError",
    "CheckpointNotReadyError",
    "ClusterUnreachableError",
    "ConfigError",
    "ContractError",
    "InvalidEventError",
    "InvalidRequestError",
    "JobNotFoundError",
    "JobSpecError",
    "KubernetesError",
    "NamedFileRefusedError",
    "PolicyError",
    "PolicyServerUnreachableError",
    "ProbeError",
    "ProbeUnavailableError",
    "RenderingError",
    "ResultsMismatchError",
    "RlinfBenchError",
    "SimulatorError",
    "StorageError",
    "StorageLocationError",
    "StoredObjectMissingError",
    "TrackingUnavailableError",
    "UnknownBaselineError",
    "UnknownNameError",
    "UnknownPolicyError",
    "UnknownSuiteError",
    "WorkerCrashError",
]


class RlinfBenchError(Exception):
    """Base class of every error raised on purpose by rlinf-bench.

    Its message is redacted where it is made (:func:`rlinf_bench.redaction.redact`): no webhook, task token
    or AWS credential reaches a log, the execution history or a notification through an error of ours.
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class ConfigError(RlinfBenchError):
    """A configuration value or command-line option is invalid."""


class ContractError(RlinfBenchError):
    """A JSON document does not match its contract (wrong schema_version, missing fields...)."""


class UnknownNameError(ConfigError):
    """A name that a :class:`rlinf_bench.registry.Registry` does not know; the message lists the valid names.

    ``kind`` says what was looked up (suite, protocol, baseline...), ``name`` what was asked for,
    ``valid`` the known names and ``suggestion`` the closest one (None when none is close).
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "",
        name: str = "",
        valid: tuple[str, ...] = (),
        suggestion: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.name = name
        self.valid = valid
        self.suggestion = suggestion

    def __reduce__(self) -> tuple[object, ...]:  # keyword-only fields survive pickling (worker processes)
        return (_rebuild_unknown, (type(self), str(self), self.kind, self.name, self.valid, self.suggestion))


def _rebuild_unknown(
    cls: type[UnknownNameError], message: str, kind: str, name: str, valid: tuple[str, ...], suggestion: str | None
) -> UnknownNameError:
    return cls(message, kind=kind, name=name, valid=valid, suggestion=suggestion)


class UnknownSuiteError(UnknownNameError):
    """A benchmark suite (or RoboTwin task) name that the registry does not know."""


class CheckpointError(RlinfBenchError):
    """A checkpoint is missing, incomplete or unreadable."""


class CheckpointNotReadyError(CheckpointError):
    """A checkpoint is still being written or exported: try again later (never drop it)."""


class StorageError(RlinfBenchError):
    """A stored document (local file or S3 object) cannot be read or written."""


class StoredObjectMissingError(StorageError):
    """The path or object does not exist."""


class StorageLocationError(StorageError):
    """A bucket that does not exist or cannot be one: every retry gets the same answer (:mod:`rlinf_bench.ports`)."""


class NamedFileRefusedError(StorageError):
    """A file named by data (a result's video) was not read: outside its run's folder, a link, not an allowed
    media type by content, or too big (:mod:`rlinf_bench.named_files`); the message says which."""


class InvalidEventError(RlinfBenchError):
    """An incoming storage event or object key cannot be used (malformed, wrong type, odd key); dead-letter it."""


class SimulatorError(RlinfBenchError):
    """The simulator cannot be set up (missing package or assets, rendering backend)."""


class RenderingError(SimulatorError):
    """A worker could not create or use its EGL/OpenGL rendering context (the message names the device)."""


class PolicyError(RlinfBenchError):
    """A policy spec cannot be loaded or a policy returned a malformed action batch."""


class UnknownPolicyError(UnknownNameError, PolicyError):
    """A policy scheme, builtin policy or adapter name that the policy registry does not know."""


class PolicyServerUnreachableError(PolicyError):
    """A remote policy server did not answer after bounded retries."""


class WorkerCrashError(RlinfBenchError):
    """An environment worker kept crashing on the same episode beyond the retry budget."""


class UnknownBaselineError(UnknownNameError):
    """A baseline (or infrastructure probe) name that the baselines registry does not know."""


class ResultsMismatchError(RlinfBenchError):
    """Result files that cannot be aggregated together (different checkpoints, suites or settings)."""


class TrackingUnavailableError(RlinfBenchError):
    """The MLflow tracking server could not be reached after bounded retries."""


class ProbeError(RlinfBenchError):
    """An infrastructure probe could not measure: bad input or a broken environment (verdict ``fail``)."""


class ProbeUnavailableError(ProbeError):
    """There is nothing to measure here: no GPU, no NVML, a run without the needed metrics (``not_available``)."""


class JobSpecError(ConfigError):
    """A Kubernetes Job cannot be built from the request (bad name, label, image, resources, suite or probe)."""


class InvalidRequestError(JobSpecError):
    """An EvalRequest (or EvalRun) that no Job could run; raised by the Plan state before any Job starts.

    A :class:`JobSpecError` (and so a :class:`ConfigError`) for the callers that catch those.
    """


class KubernetesError(RlinfBenchError):
    """The Kubernetes API refused or failed a request (after bounded retries where retrying can help)."""


class ClusterUnreachableError(KubernetesError):
    """The cluster's API server did not answer (connection errors or 5xx) after bounded retries."""


class JobNotFoundError(KubernetesError):
    """A Job that was asked about does not exist (never submitted, cancelled, or removed by its TTL)."""
