"""Drive a Lambda-style SQS batch handler from a real queue, the way Lambda's event source mapping does.

moto's SQS -> Lambda mapping never runs a handler without Docker and ignores ``batchItemFailures``
(REFERENCE.md section 4), so local runs and tests use this poller: receive with real attributes,
build the SQS event, call the handler, delete what succeeded, leave failures in flight so they come
back later (and move to the DLQ after ``maxReceiveCount``, as SQS does in production).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rlinf_local.lambdas import LocalLambdaContext

__all__ = ["BatchHandler", "LocalLambdaContext", "PollStats", "SqsPoller"]

BatchHandler = Callable[[dict[str, Any], Any], Any]


@dataclass
class PollStats:
    batches: int = 0
    records: int = 0
    failures: int = 0


@dataclass
class SqsPoller:
    """Feeds ``handler`` from ``queue_url`` in batches of up to ``batch_size``."""

    sqs: Any
    queue_url: str
    handler: BatchHandler
    batch_size: int = 10
    context: Any = field(default_factory=LocalLambdaContext)
    region: str = "us-east-1"
    _in_flight: list[str] = field(default_factory=list)  # receipt handles of failed records
    _queue_arn: str = ""

    def _arn(self) -> str:
        if not self._queue_arn:
            attrs = self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])
            self._queue_arn = attrs["Attributes"]["QueueArn"]
        return self._queue_arn

    def _record(self, msg: dict[str, Any]) -> dict[str, Any]:
        body = msg["Body"]
        return {
            "messageId": msg["MessageId"],
            "receiptHandle": msg["ReceiptHandle"],
            "body": body,
            "attributes": msg.get("Attributes", {}),
            "messageAttributes": msg.get("MessageAttributes", {}),
            "md5OfBody": msg.get("MD5OfBody") or hashlib.md5(body.encode()).hexdigest(),
            "eventSource": "aws:sqs",
            "eventSourceARN": self._arn(),
            "awsRegion": self.region,
        }

    def poll_once(self) -> PollStats:
        """Receive one batch and hand it to the handler; an empty receive returns zero records."""
        resp = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=self.batch_size,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
            WaitTimeSeconds=0,
        )
        messages = resp.get("Messages", [])
        if not messages:
            return PollStats()
        records = [self._record(m) for m in messages]
        result = self.handler({"Records": records}, self.context) or {}
        failed = {item["itemIdentifier"] for item in result.get("batchItemFailures", [])}
        done = [r for r in records if r["messageId"] not in failed]
        for start in range(0, len(done), 10):
            chunk = done[start : start + 10]
            self.sqs.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": r["receiptHandle"]} for i, r in enumerate(chunk)],
            )
        self._in_flight.extend(r["receiptHandle"] for r in records if r["messageId"] in failed)
        return PollStats(batches=1, records=len(records), failures=len(failed))

    def drain(self, max_batches: int = 100_000) -> PollStats:
        """Poll until the queue has no visible message; failed records stay in flight (invisible)."""
        total = PollStats()
        for _ in range(max_batches):
            stats = self.poll_once()
            if not stats.records:
                break
            total.batches += stats.batches
            total.records += stats.records
            total.failures += stats.failures
        return total

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    def release(self) -> int:
        """End the visibility timeout of failed records now (what waiting for it would do); returns how many."""
        handles, self._in_flight = self._in_flight, []
        for handle in handles:
            self.sqs.change_message_visibility(QueueUrl=self.queue_url, ReceiptHandle=handle, VisibilityTimeout=0)
        return len(handles)
