"""Corrections to moto (5.2.x) that the embedded default and the workflow tests need; each one is listed
in docs/workflow.md under "moto workarounds".

- ``SendTaskFailure`` drops its ``cause`` in moto's response layer (only ``error`` reaches the engine), so a
  Job's reason for failing would be lost. The patch passes the cause through, as AWS does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["moto_fixes"]


@contextmanager
def moto_fixes() -> Iterator[None]:
    """Apply the corrections for the duration of the block."""
    from moto.stepfunctions.responses import StepFunctionResponse

    original = StepFunctionResponse.send_task_failure

    def send_task_failure(self: Any) -> Any:
        self.stepfunction_backend.send_task_failure(
            self._get_param("taskToken"), error=self._get_param("error"), cause=self._get_param("cause")
        )
        return original.__globals__["EmptyResult"]()

    StepFunctionResponse.send_task_failure = send_task_failure  # type: ignore[method-assign]
    try:
        yield
    finally:
        StepFunctionResponse.send_task_failure = original  # type: ignore[method-assign]
