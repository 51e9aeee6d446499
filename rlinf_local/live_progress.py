"""Progress of a running execution: runs and probes done, episodes done, ETA, read while it runs.

The Plan state's output (in the execution history) names every Map item and where its result will be; the
eval Jobs rewrite their RunResult as episodes finish (:mod:`eval_runner.result_writer`), so reading those
files gives episodes done without any channel of its own. A run with robustness counts its perturbed
episodes (each task's ``perturbed``) beside the standard ones, in the done and in the total. The same reading
serves the embedded default (``pipeline``/``watch`` show it; ``DIR/state.json`` keeps it for ``status``) and a
deployed stack.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlinf_aws.s3_objects import S3Objects
from rlinf_bench.contracts.robustness import RobustnessSpec
from rlinf_bench.document_store import Storage
from rlinf_bench.errors import StorageError, StoredObjectMissingError
from rlinf_bench.robustness import perturbed_episodes
from rlinf_bench.suites import get_suite
from rlinf_local.execution_history import history, state_outputs

__all__ = ["LiveProgress", "ProgressLine", "read_progress"]

FINISHED_RUN = ("complete", "failed")


class LiveProgress(BaseModel):
    """How far one execution has come."""

    model_config = ConfigDict(extra="forbid")

    runs_total: int = 0
    runs_finished: int = Field(default=0, description="eval runs whose result is final (complete or failed)")
    probes_total: int = 0
    probes_finished: int = 0
    episodes_total: int = 0
    episodes_done: int = 0
    elapsed_s: float = Field(default=0.0, ge=0)
    eta_s: float | None = Field(
        default=None,
        description="seconds left, from the rate since the first finished episode (rlinf_local.eta); None until "
        "that rate is settled, and in a one-off reading",
    )

    def line(self) -> str:
        """One line for a person: ``runs 1/3 · probes 2/2 · episodes 120/300 (40 %) · 3m12s · ETA 4m48s``."""
        parts = [f"runs {self.runs_finished}/{self.runs_total}"]
        if self.probes_total:
            parts.append(f"probes {self.probes_finished}/{self.probes_total}")
        if self.episodes_total:
            pct = 100 * self.episodes_done / self.episodes_total
            parts.append(f"episodes {self.episodes_done}/{self.episodes_total} ({pct:.0f} %)")
        parts.append(f"{_duration(self.elapsed_s)} elapsed")
        if self.eta_s is not None:
            parts.append(f"ETA {_duration(self.eta_s)}")
        return " · ".join(parts)


def _duration(seconds: float) -> str:
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _episodes_expected(run: dict[str, Any]) -> int:
    """Every episode run ``run`` (a Plan item's EvalRun) plays: its standard ones and its perturbed ones."""
    tasks = run.get("task_ids")
    if tasks is None:
        try:
            tasks = range(get_suite(str(run.get("suite"))).n_tasks)
        except Exception:  # a suite this install does not know: count what the results say instead
            return 0
    trials = int(run.get("trials_per_task") or run.get("trials") or 0)
    return len(tasks) * trials + perturbed_episodes(_robustness(run), len(tasks), trials)


def _robustness(run: dict[str, Any]) -> RobustnessSpec | None:
    """The run's robustness, or None when off (or unreadable: the results' count then takes over)."""
    spec = run.get("robustness")
    if not spec:
        return None
    try:
        return RobustnessSpec.model_validate(spec)
    except ValidationError:
        return None


def _episodes_done(doc: dict[str, Any]) -> int:
    """Episodes a result document holds: the standard ones (``episodes``) and each task's perturbed ones."""
    tasks = doc.get("tasks")
    perturbed = (
        sum(len(t.get("perturbed") or []) for t in tasks if isinstance(t, dict)) if isinstance(tasks, list) else 0
    )
    return int(doc.get("episodes") or 0) + perturbed


def _read(storage: Storage, uri: str) -> dict[str, Any] | None:
    """A result document as JSON, or None while it is not there (or half-readable: the next poll sees it)."""
    if not uri:
        return None
    try:
        doc = json.loads(storage.read_bytes(uri))
    except (StoredObjectMissingError, StorageError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def read_progress(sfn: Any, s3: Any, arn: str, *, now: float | None = None) -> LiveProgress | None:
    """The progress of execution ``arn``; None until its Plan state has finished (nothing to count yet).

    Counts only: one reading cannot tell start-up from the episodes' own pace, so the ETA is left to a
    follower that reads it again and again (:class:`rlinf_local.eta.EtaEstimate`)."""
    desc = sfn.describe_execution(executionArn=arn)
    plan = state_outputs(history(sfn, arn)).get("Plan")
    if not isinstance(plan, dict):
        return None
    storage = Storage(S3Objects(s3))
    progress = LiveProgress()
    for item in plan.get("eval_items") or []:
        run = item.get("run") or {}
        expected = _episodes_expected(run)
        doc = _read(storage, str(item.get("result_uri") or ""))
        done = _episodes_done(doc) if doc else 0
        progress.runs_total += 1
        progress.runs_finished += bool(doc and doc.get("status") in FINISHED_RUN)
        progress.episodes_total += max(expected, done)
        progress.episodes_done += done
    for item in plan.get("probe_items") or []:
        progress.probes_total += 1
        progress.probes_finished += _read(storage, str(item.get("result_uri") or "")) is not None
    started = desc.get("startDate")
    now = time.time() if now is None else now
    progress.elapsed_s = max(0.0, now - started.timestamp()) if started is not None else 0.0
    return progress


class ProgressLine:
    """Shows progress on ``stream``: rewritten in place on a terminal, a new line per change elsewhere (logs).

    Off (``enabled=False``) under ``--json``. Off a terminal, a line is written only when the counts change
    and at most every ``min_interval_s``, so a CI log gets a few lines, not one per poll.
    """

    def __init__(
        self,
        *,
        enabled: bool = True,
        stream: TextIO | None = None,
        min_interval_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.min_interval_s = 0.0 if self.tty else min_interval_s
        self.clock = clock
        self._last_counts: tuple[int, ...] | None = None
        self._last_write: float | None = None
        self._open = False

    def show(self, progress: LiveProgress) -> None:
        """Write ``progress`` when it changed (and, off a terminal, not too soon after the last line)."""
        if not self.enabled:
            return
        counts = (progress.runs_finished, progress.probes_finished, progress.episodes_done, progress.runs_total)
        now = self.clock()
        if counts == self._last_counts and not self.tty:
            return
        if self._last_write is not None and now - self._last_write < self.min_interval_s:
            return
        self._last_counts, self._last_write = counts, now
        if self.tty:
            self.stream.write("\r\033[K" + progress.line())
            self._open = True
        else:
            self.stream.write(progress.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the in-place line so what is printed next starts on a line of its own."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False
