"""The queue sentinel's scheduled step: sweep the namespace's Kueue Jobs (rlinf_k8s.queue_sentinel).

Runs every few minutes (template.yaml QueueSentinelSchedule, well inside the shortest heartbeat). A backend
without a queue (the local executor) has nothing to sweep.
"""

from __future__ import annotations

from typing import Any

from rlinf_k8s.queue_sentinel import SentinelReport, TaskChannel, sweep
from rlinf_k8s.submitter import Submitter

__all__ = ["run_queue_sentinel"]


def run_queue_sentinel(submitter: Submitter, sfn: TaskChannel, namespace: str) -> SentinelReport:
    """Heartbeat the queued Jobs of ``namespace`` within their limit, fail the tasks of those past it."""
    reader: Any = getattr(submitter, "queued_jobs", None)
    if reader is None:
        return SentinelReport()
    return sweep(reader(namespace), sfn)
