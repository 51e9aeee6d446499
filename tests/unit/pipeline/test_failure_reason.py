"""A run whose Job reported its own failure is explained by that failure, not by the Job's state."""

from __future__ import annotations

from pathlib import Path

from rlinf_aws.eval_results import failure_line
from rlinf_aws.state_notify_failure import explain_run_failure
from rlinf_bench.contracts.workflow import RunFailureInput, StateError
from rlinf_k8s.submitter import JobState, JobStatus
from tests.unit.pipeline.test_queued_too_long import eval_item


class _StillExiting:
    """The Job sent SendTaskFailure; its process has not exited when the notifier asks."""

    def status(self, name: str, namespace: str) -> JobStatus:
        return JobStatus(name=name, namespace=namespace, state=JobState.RUNNING)

    def cancel(self, name: str, namespace: str) -> bool:
        raise AssertionError("a Job that reported its own failure is left to exit")


def _explain(tmp_path: Path, error: StateError) -> str:
    item = eval_item(tmp_path)
    outcome = explain_run_failure(
        RunFailureInput(item=item, error=error),
        submitter_factory=lambda: _StillExiting(),  # type: ignore[arg-type,return-value]
    )
    return failure_line(outcome)


def test_a_job_that_reported_its_failure_is_headed_by_its_error(tmp_path: Path) -> None:
    line = _explain(tmp_path, StateError(Error="CheckpointError", Cause="weights.pt is not a demo policy state dict"))

    assert "still running" not in line
    assert ": CheckpointError: weights.pt is not a demo policy state dict" in line
