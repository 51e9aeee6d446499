"""watch tells the backlog every execution that ended; one the backlog could not take yet is told again later."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from rlinf_local.watch import release_ended


class Router:
    """The embedded router's end-event entry point, throttled on its first ``throttled`` calls."""

    def __init__(self, throttled: int) -> None:
        self.throttled, self.calls = throttled, 0
        self.lines: list[str] = []

    def echo(self, line: str) -> None:  # the embedded default's progress lines (stderr)
        self.lines.append(line)

    def execution_ended(self, arn: str) -> list[str]:
        self.calls += 1
        if self.calls <= self.throttled:
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "GetItem")
        return [f"released-after-{arn.rsplit(':', 1)[-1]}"]


def test_an_end_the_backlog_could_not_take_is_told_again_on_the_next_scan() -> None:
    emb: Any = Router(throttled=1)
    ended = ["arn:aws:states:us-east-1:1:execution:eval:run-1"]

    release_ended(emb, ended)
    assert ended == ["arn:aws:states:us-east-1:1:execution:eval:run-1"]  # kept, not dropped
    assert "retried on the next scan" in emb.lines[-1]

    release_ended(emb, ended)

    assert ended == []
    assert emb.lines[-1] == "backlog: released released-after-run-1"
