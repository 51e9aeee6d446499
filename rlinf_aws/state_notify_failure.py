"""The failure states: explain a failed run (asking Kubernetes why), and tell people when the flow stops.

A run whose Job never called back ends in a heartbeat timeout, which by itself says nothing. So the
run-failure step asks the cluster for the Job's status (rlinf_k8s.job_status) and carries the reason
(OOMKilled, ImagePullBackOff, Evicted, DeadlineExceeded, BackoffLimitExceeded) into the report, and
stops the Job so a wedged pod does not hold a GPU.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from rlinf_aws.state_publish import send
from rlinf_bench.contracts.workflow import (
    FailureNotice,
    FailureNotifyInput,
    OutcomeStatus,
    RunFailureInput,
    RunOutcome,
    StateError,
)
from rlinf_bench.errors import RlinfBenchError
from rlinf_bench.reporting.message_limits import ERROR_TEXT_MAX_CHARS, cut
from rlinf_bench.reporting.messages import failure_notification
from rlinf_k8s.queue_sentinel import QUEUE_ERROR
from rlinf_k8s.submitter import Submitter

log = logging.getLogger(__name__)

__all__ = ["cause_text", "explain_run_failure", "notify_failure"]

TIMEOUT_ERRORS = frozenset({"States.HeartbeatTimeout", "States.Timeout"})


def cause_text(error: StateError) -> str:
    """The human part of a Cause: a Lambda's ``errorMessage`` when the cause is its JSON, else the text."""
    raw = error.cause.strip()
    if raw.startswith("{"):
        try:
            doc = json.loads(raw)
        except json.JSONDecodeError:
            return raw
        if isinstance(doc, dict) and doc.get("errorMessage"):
            return str(doc["errorMessage"])
    return raw


def _job_status(
    submitter_factory: Callable[[], Submitter], name: str, namespace: str, stop: bool
) -> tuple[str | None, str]:
    """(Kubernetes reason, one-line description) of a Job; stops it when ``stop``. Never raises."""
    try:
        submitter = submitter_factory()
        status = submitter.status(name, namespace)
        if stop and not status.state.terminal:
            submitter.cancel(name, namespace)
    except Exception as exc:  # the explanation is best effort: the run is failed either way
        log.warning("could not ask Kubernetes about Job %s/%s: %s", namespace, name, exc)
        return None, f"the Job's status could not be read ({type(exc).__name__}: {exc})"
    # A Job that reported its own failure may not have exited yet: "still running" would then head the line
    # instead of its error. Only a stopped Job (silent, or queued too long) is named by the state it was in.
    reason = status.reason or (None if status.state.terminal or not stop else f"still {status.state.value}")
    return reason, status.describe()


def explain_run_failure(inp: RunFailureInput, submitter_factory: Callable[[], Submitter]) -> RunOutcome:
    """A failed RunOutcome for an item whose Task failed, with Kubernetes' reason when it has one."""
    item, err = inp.item, inp.error
    timed_out = err.error in TIMEOUT_ERRORS
    cause = cause_text(err)
    job_reason: str | None = None
    if item.job_name:
        # A Job that waited past its queueing limit is stopped too: nobody awaits it once Kueue admits it.
        stop = timed_out or err.error == QUEUE_ERROR
        job_reason, described = _job_status(submitter_factory, item.job_name, item.namespace, stop=stop)
        if timed_out:
            # Step Functions (and moto) may report a missed heartbeat as States.Timeout: say both.
            cause = f"the Job went silent (no heartbeat or result in time); {described}"
    # The outcome travels in the Map's output with every other run's: a long cause is cut here, the whole
    # text stays in the execution history (the task's failure event).
    cause = cut(cause, ERROR_TEXT_MAX_CHARS, rest_in="the execution history (the task's failure event)")
    return RunOutcome(
        status=OutcomeStatus.FAILED,
        kind=item.kind,
        job_name=item.job_name,
        result_uri=item.result_uri,
        suite=item.run.suite if item.run else None,
        run_index=item.run.run_index if item.run else None,
        probe=item.probe.name if item.probe else None,
        error=err.error or "Failed",
        cause=cause,
        job_reason=job_reason,
    )


def notify_failure(inp: FailureNotifyInput, *, sns: Any, topic_arn: str, rerun: str = "") -> FailureNotice:
    """Send the failure notice for an execution that stops without a verdict; ``rerun``: the command it tells
    people to run once the cause is fixed (default: the deployed stack's ``rlinf-bench trigger --rerun``)."""
    request = inp.request
    what = (
        f"{request.checkpoint.experiment} global_step {request.checkpoint.global_step} ({request.checkpoint.uri})"
        if request is not None
        else (inp.execution or "an evaluation")
    )
    stage = f" in {inp.stage}" if inp.stage else ""
    reason = f"{inp.error.error or 'Error'}{stage}: {cause_text(inp.error) or 'no cause given'}"
    details = [f"execution: {inp.execution}"] if inp.execution else []
    history = f"the execution history of {inp.execution}" if inp.execution else "the execution history"
    note = failure_notification(what, reason, details=details, rest_in=history, rerun=rerun)
    if not topic_arn:
        raise RlinfBenchError(f"cannot send the failure notice ({reason}): RESULTS_TOPIC_ARN is not set")
    message_id = send(note, sns=sns, topic_arn=topic_arn)
    return FailureNotice(subject=note.subject, text=note.text, message_id=message_id)
