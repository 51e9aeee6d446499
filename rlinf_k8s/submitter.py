"""The one interface every compute backend implements: submit, status, logs, cancel.

Two backends follow it: :class:`~rlinf_k8s.kubernetes_backend.KubernetesSubmitter` (a real
cluster) and :class:`~rlinf_local.local_executor.LocalExecutor` (subprocesses on this machine).
Both report the same states and the same failure reasons, so callers (the job_submitter Lambda, the
failure branch of the state machine, the local pipeline) never need to know which one ran a Job.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from rlinf_k8s.jobs import JobBundle

__all__ = ["FailureReason", "JobState", "JobStatus", "SubmitResult", "Submitter"]


class JobState(StrEnum):
    """Where a Job is in its life."""

    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"

    @property
    def terminal(self) -> bool:
        return self in (JobState.SUCCEEDED, JobState.FAILED)


class FailureReason(StrEnum):
    """Why a Job failed (or is stuck), in Kubernetes' own words so they match ``kubectl describe``."""

    OOM_KILLED = "OOMKilled"
    IMAGE_PULL_BACKOFF = "ImagePullBackOff"
    ERR_IMAGE_PULL = "ErrImagePull"
    INVALID_IMAGE_NAME = "InvalidImageName"
    CREATE_CONTAINER_CONFIG_ERROR = "CreateContainerConfigError"
    EVICTED = "Evicted"
    DEADLINE_EXCEEDED = "DeadlineExceeded"
    BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
    POD_FAILURE_POLICY = "PodFailurePolicy"  # an exit code that fails the Job at once (see exit_code)
    ERROR = "Error"


class JobStatus(BaseModel):
    """A Job's state, with the reason and a human message when it failed or is stuck."""

    model_config = ConfigDict(extra="forbid")

    name: str
    namespace: str
    state: JobState
    reason: str | None = None
    message: str = ""
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    exit_code: int | None = None

    def describe(self) -> str:
        """One line for logs and notifications."""
        why = f" ({self.reason}: {self.message})" if self.reason else (f" ({self.message})" if self.message else "")
        return f"Job {self.namespace}/{self.name} {self.state.value}{why}"


class SubmitResult(BaseModel):
    """What ``submit`` did: ``created`` is False when the Job already existed (idempotent re-submit)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    namespace: str
    created: bool


@runtime_checkable
class Submitter(Protocol):
    """Runs Jobs somewhere. Every method names a Job by (name, namespace), as in Kubernetes."""

    def submit(self, bundle: JobBundle) -> SubmitResult:
        """Create the Job (and its Service); one that already exists counts as success."""
        ...

    def status(self, name: str, namespace: str) -> JobStatus:
        """The Job's state; raises :class:`~rlinf_bench.errors.JobNotFoundError` when there is no such Job."""
        ...

    def logs(self, name: str, namespace: str, *, tail_lines: int = 100) -> str:
        """The last ``tail_lines`` lines of the Job's output (all pods, newest last)."""
        ...

    def cancel(self, name: str, namespace: str) -> bool:
        """Stop and remove the Job; False when it did not exist."""
        ...
