"""How a Job tells the state machine it is alive, done, or failed: the task-token callbacks.

The job_submitter passes the Map item's task token to the Job in ``RLINF_BENCH_TASK_TOKEN``. The Job
sends a heartbeat every ``RLINF_BENCH_HEARTBEAT_S / 3`` seconds while it runs, then exactly one of
SendTaskSuccess (with a :class:`JobCallback`) or SendTaskFailure. A Job that dies without calling
back is caught by the state's heartbeat timeout. The token is a credential for one state: it is
never logged, and ``repr`` hides it.

Only failures that a retry cannot fix are reported with SendTaskFailure (bad input, a failed run):
a pod killed by Kubernetes is retried by its Job, and the next pod keeps the heartbeats going.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from rlinf_bench.contracts.results import RunResult
from rlinf_bench.contracts.workflow import JobCallback
from rlinf_bench.redaction import mask

log = logging.getLogger(__name__)

__all__ = ["HEARTBEAT_ENV", "TOKEN_ENV", "TaskCallback"]

TOKEN_ENV = "RLINF_BENCH_TASK_TOKEN"
HEARTBEAT_ENV = "RLINF_BENCH_HEARTBEAT_S"
# Step Functions limits: error names up to 256 characters, causes up to 32768.
MAX_ERROR = 256
MAX_CAUSE = 32768
MAX_HEARTBEAT_INTERVAL_S = 300.0
# Whether any TaskCallback of this process sent its final call: the Job's outermost frame
# (rlinf_aws.job_entry) then sends no second one.
_FINAL_SENT = threading.Event()


def final_callback_sent() -> bool:
    """True once this process sent SendTaskSuccess or SendTaskFailure for its token."""
    return _FINAL_SENT.is_set()


class TaskCallback:
    """Calls back one waiting Task state through an injected Step Functions client (built lazily)."""

    def __init__(
        self,
        token: str,
        *,
        heartbeat_s: float = 1800.0,
        sfn_factory: Callable[[], Any] | None = None,
    ) -> None:
        if not token:
            raise ValueError("a task token is required")
        self._token = token
        self.heartbeat_interval_s = max(1.0, min(heartbeat_s / 3.0, MAX_HEARTBEAT_INTERVAL_S))
        self._sfn_factory = sfn_factory
        self._sfn: Any = None
        self._lock = threading.Lock()
        self.sent: str | None = None  # "success" | "failure" once a final call went out

    def __repr__(self) -> str:
        return f"TaskCallback(token=<hidden>, heartbeat_interval_s={self.heartbeat_interval_s})"

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] = os.environ, *, sfn_factory: Callable[[], Any] | None = None
    ) -> TaskCallback | None:
        """The callback of a Job started by the state machine; None when the Job runs on its own."""
        token = env.get(TOKEN_ENV, "")
        if not token:
            return None
        mask(token)  # whatever echoes it later (an SDK error, a log line) shows <redacted>
        try:
            heartbeat = float(env.get(HEARTBEAT_ENV, "") or 1800.0)
        except ValueError:
            heartbeat = float("nan")
        if not (math.isfinite(heartbeat) and heartbeat > 0):  # the state's HeartbeatSeconds is a positive integer
            log.warning("%s=%r is not a positive number of seconds: using 1800", HEARTBEAT_ENV, env.get(HEARTBEAT_ENV))
            heartbeat = 1800.0
        return cls(token, heartbeat_s=heartbeat, sfn_factory=sfn_factory)

    @property
    def sfn(self) -> Any:
        with self._lock:
            if self._sfn is None:
                if self._sfn_factory is not None:
                    self._sfn = self._sfn_factory()
                else:
                    import boto3
                    from botocore.config import Config

                    # botocore's standard retry mode is the retry loop for AWS calls.
                    self._sfn = boto3.client("stepfunctions", config=Config(retries={"mode": "standard"}))
            return self._sfn

    def heartbeat(self) -> bool:
        """One heartbeat; False (logged, never raised) when it could not be sent."""
        try:
            self.sfn.send_task_heartbeat(taskToken=self._token)
        except Exception as exc:  # a lost heartbeat is not a reason to stop an evaluation
            log.warning("task heartbeat not sent: %s", _describe(exc))
            return False
        return True

    @contextmanager
    def heartbeats(self) -> Iterator[None]:
        """Send heartbeats in a daemon thread for the duration of the block (the first one at once)."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.is_set():
                self.heartbeat()
                stop.wait(self.heartbeat_interval_s)

        thread = threading.Thread(target=beat, name="task-heartbeat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=5.0)

    def succeed(self, payload: JobCallback) -> None:
        """SendTaskSuccess with ``payload``; raises when the state machine cannot be told."""
        self.sfn.send_task_success(taskToken=self._token, output=payload.model_dump_json())
        self.sent = "success"
        _FINAL_SENT.set()
        log.info("reported success to the state machine (%s)", payload.result_uri)

    def fail(self, error: str, cause: str) -> None:
        """SendTaskFailure; ``error`` is a short name (e.g. RunFailed), ``cause`` says why and names the input."""
        self.sfn.send_task_failure(taskToken=self._token, error=error[:MAX_ERROR], cause=cause[:MAX_CAUSE])
        self.sent = "failure"
        _FINAL_SENT.set()
        log.info("reported failure to the state machine: %s", error)


def _describe(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        err = response.get("Error", {})
        return f"{err.get('Code', type(exc).__name__)}: {err.get('Message', '')}"
    return f"{type(exc).__name__}: {exc}"


def job_name_from_env(env: Mapping[str, str] = os.environ) -> str:
    """The Job's own name (the Job builder sets RLINF_BENCH_JOB_NAME)."""
    return env.get("RLINF_BENCH_JOB_NAME", "")


@contextmanager
def reporting_to_state_machine(
    callback: TaskCallback | None, *, error_name: str = "JobFailed"
) -> Iterator[TaskCallback | None]:
    """Heartbeats while the block runs; an error that escapes it is sent with SendTaskFailure, then re-raised.

    Interruptions (Ctrl-C, SIGTERM) are not reported: Kubernetes retries the pod, whose heartbeats then
    take over, and a pod that never comes back is caught by the heartbeat timeout.
    """
    if callback is None:
        yield None
        return
    with callback.heartbeats():
        try:
            yield callback
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            if callback.sent is None:
                try:
                    callback.fail(type(exc).__name__ or error_name, str(exc) or error_name)
                except Exception as send_exc:  # the original error matters more; the timeout catches the rest
                    log.error("could not report the failure to the state machine: %s", _describe(send_exc))
            raise


def report_run_result(callback: TaskCallback | None, result_uri: str, result: RunResult) -> None:
    """An eval Job's final callback: where its RunResult is, with a one-line headline (no-op outside a workflow)."""
    if callback is None:
        return
    callback.succeed(
        JobCallback(
            kind="eval",
            job_name=job_name_from_env(),
            result_uri=result_uri,
            headline=f"{result.suite} run {result.run_index}: SR {result.success_rate:.1%} over {result.episodes} episodes",
            suite=result.suite,
            run_index=result.run_index,
        )
    )
