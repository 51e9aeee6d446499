"""Reading an execution's history from Step Functions (moto's or AWS's): every event, and each state's output."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["history", "state_outputs"]


def history(sfn: Any, arn: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        kw = {"nextToken": token} if token else {}
        page = sfn.get_execution_history(executionArn=arn, maxResults=1000, **kw)
        events += page["events"]
        token = page.get("nextToken")
        if not token:
            return events


def state_outputs(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Output of each top-level state that exited (the last exit of a name wins)."""
    out: dict[str, Any] = {}
    for e in events:
        details = e.get("stateExitedEventDetails")
        if details and details.get("name") in {"Plan", "RunJobs", "Aggregate", "Publish", "NotifyFailure"}:
            try:
                out[details["name"]] = json.loads(details.get("output") or "null")
            except json.JSONDecodeError:
                continue
    return out
