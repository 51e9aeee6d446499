"""Test-only fault injection: make one env worker die, hang or fail to render at a chosen episode and step.

The sim tests use it to exercise crash recovery, hang detection and resume with the real simulator; the worker
processes must see it, so it lives in the package, in this one clearly named module. Lambda artifacts and the
core never import it, and no request sets it: it reaches a run only through ``EvalSettings.fault_injection``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FaultInjection"]


class FaultInjection(BaseModel):
    """Make the worker running (task_id, init_state) fail at policy step ``at_step``.

    ``mode="exit"`` dies with ``os._exit`` (like a segfault or an OOM kill); ``mode="hang"`` stops
    answering (like a deadlocked renderer), which the runner detects with ``step_timeout_s``;
    ``mode="egl"`` fails to create the rendering context when the episode starts (``at_step`` unused).
    With ``marker_file`` set the fault happens once: the worker creates the file first and never fails
    again while it exists (so the re-run succeeds). Without it the worker fails every time, which
    exercises the retry budget.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: int
    init_state: int
    at_step: int = Field(default=1, ge=0)
    marker_file: Path | None = None
    exit_code: int = 17
    mode: Literal["exit", "hang", "egl"] = "exit"

    def _due(self, task_id: int, init_state: int, *, at_start: bool, steps: int = 0) -> bool:
        if (task_id, init_state) != (self.task_id, self.init_state):
            return False
        if at_start != (self.mode == "egl") or (not at_start and steps < self.at_step):
            return False
        return self.marker_file is None or not self.marker_file.exists()

    def _mark(self) -> None:
        if self.marker_file is not None:
            self.marker_file.write_text(f"{self.mode} pid {os.getpid()}\n")

    def on_episode_start(self, task_id: int, init_state: int) -> None:
        """Raise as a failed EGL context creation would, when this is the episode (``mode="egl"``)."""
        if self._due(task_id, init_state, at_start=True):
            self._mark()
            raise RuntimeError("eglInitialize failed: EGL_NOT_INITIALIZED (fault injection)")

    def on_step(self, task_id: int, init_state: int, steps: int) -> None:
        """Die or stop answering, when this is the episode and ``steps`` have been taken (``exit``, ``hang``)."""
        if not self._due(task_id, init_state, at_start=False, steps=steps):
            return
        self._mark()
        if self.mode == "hang":
            while True:  # stop answering like a deadlocked renderer would
                time.sleep(3600)
        os._exit(self.exit_code)  # die like a segfaulting simulator would
