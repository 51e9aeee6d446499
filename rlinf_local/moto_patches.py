"""Corrections to moto (5.2.x) that the embedded default and the workflow tests need; each one is listed
in docs/workflow.md under "moto workarounds".

- ``SendTaskFailure`` drops its ``cause`` in moto's response layer (only ``error`` reaches the engine), so a
  Job's reason for failing would be lost. The patch passes the cause through, as AWS does.
- A ``.waitForTaskToken`` task with a heartbeat sets its heartbeat up only after it invoked the submitter, and
  then waits on the heartbeat alone. A callback that arrives in between (a Job that fails at once, or any Job
  while the engine's thread is descheduled on a loaded machine) is stored but never noticed: the execution
  waited the whole ``heartbeat_s`` (30 min by default) and then failed with a heartbeat timeout instead of the
  Job's own outcome. The patch wakes the new heartbeat when the outcome is already there.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["moto_fixes"]


@contextmanager
def moto_fixes() -> Iterator[None]:
    """Apply the corrections for the duration of the block."""
    from moto.stepfunctions.parser.asl.eval.callback.callback import CallbackEndpoint
    from moto.stepfunctions.responses import StepFunctionResponse

    original = StepFunctionResponse.send_task_failure
    original_heartbeat = CallbackEndpoint.setup_heartbeat_endpoint

    def send_task_failure(self: Any) -> Any:
        self.stepfunction_backend.send_task_failure(
            self._get_param("taskToken"), error=self._get_param("error"), cause=self._get_param("cause")
        )
        return original.__globals__["EmptyResult"]()

    def setup_heartbeat_endpoint(self: Any, heartbeat_seconds: int) -> Any:
        endpoint = original_heartbeat(self, heartbeat_seconds)
        # notify() stores the outcome before it looks for a heartbeat; this looks for the outcome after the
        # heartbeat exists, so in any interleaving one of the two wakes the waiting task
        if self.get_outcome() is not None:
            endpoint.notify()
        return endpoint

    StepFunctionResponse.send_task_failure = send_task_failure  # type: ignore[method-assign]
    CallbackEndpoint.setup_heartbeat_endpoint = setup_heartbeat_endpoint  # type: ignore[method-assign]
    try:
        yield
    finally:
        StepFunctionResponse.send_task_failure = original  # type: ignore[method-assign]
        CallbackEndpoint.setup_heartbeat_endpoint = original_heartbeat  # type: ignore[method-assign]
