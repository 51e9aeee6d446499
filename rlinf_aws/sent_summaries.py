"""The summaries already sent, so that the same verdict on the same checkpoint goes out once.

A resumed or repeated ``demo``/``pipeline`` in the same folder aggregates the same runs again and would send the
same email and Slack message a second time. The publisher looks each summary up here first, by checkpoint and a
hash of what the summary says: success rates, verdicts, flipped states, each check's pass or fail, the failures
it reports. The measured infrastructure values are left out of the hash: the probes measure again on every
execution (53.6 then 163 MB/s of storage writes on the same machine), while a check that turns from pass to
fail is new and is sent.

One JSON file (``NOTIFIED_LOG``), written by the one process that runs the publisher: the embedded default
points it at ``DIR/outbox/sent.json``. A deployed stack sets no log and sends every summary.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.errors import ConfigError

__all__ = ["SentSummaries", "SentSummary", "summary_key"]


class SentSummary(BaseModel):
    """One summary as sent: its key, its checkpoint and subject, when, and the SNS message id."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="checkpoint URI and the content hash (summary_key)")
    checkpoint: str
    subject: str
    sent_at: str
    message_id: str = ""

    def describe(self) -> str:
        """For the line that says it was not sent again: what went out and when."""
        return f'"{self.subject}" was sent at {self.sent_at}'


class _Log(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sent: list[SentSummary] = Field(default_factory=list)


def summary_key(report: CheckpointReport, problems: Sequence[str] = ()) -> str:
    """``<checkpoint URI>#<sha256 of what the summary says>``: equal for a repeated aggregation of the same runs."""
    content: dict[str, Any] = {
        "policy": report.policy,
        "suites": [
            {
                "suite": s.suite,
                "runs": [s.runs_completed, s.runs_expected],
                "episodes": [s.successes, s.episodes],
                "verdicts": [[v.against, v.task, v.value.value] for v in s.verdicts],
                "flips": [[f.task_id, f.init_state, f.direction] for f in s.flips],
            }
            for s in report.suites
        ],
        "average_verdicts": [[v.against, v.value.value] for v in report.average_verdicts],
        "checks": sorted([c.probe, c.metric, c.verdict] for c in report.infra),
        "problems": list(problems),
    }
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]
    return f"{report.checkpoint_uri}#{digest}"


class SentSummaries:
    """The log file: :meth:`find` before sending, :meth:`record` after."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> _Log:
        if not self.path.exists():
            return _Log()
        try:
            return _Log.model_validate_json(self.path.read_text())
        except (ValidationError, ValueError) as exc:
            raise ConfigError(
                f"{self.path} is not a log of sent summaries ({exc}); delete it to send every summary again"
            ) from exc

    def find(self, key: str) -> SentSummary | None:
        """The summary sent before under ``key``, if any."""
        return next((s for s in self._read().sent if s.key == key), None)

    def record(self, key: str, *, checkpoint: str, subject: str, message_id: str) -> None:
        """Add a sent summary (written atomically: a crash leaves the previous log)."""
        log = self._read()
        now = datetime.now(UTC).isoformat(timespec="seconds")
        log.sent.append(
            SentSummary(key=key, checkpoint=checkpoint, subject=subject, sent_at=now, message_id=message_id)
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(log.model_dump_json(indent=2) + "\n")
        tmp.replace(self.path)
