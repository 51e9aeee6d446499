"""The intake's dead-letter sink on SQS (:class:`rlinf_bench.ports.DeadLetterSink`)."""

from __future__ import annotations

from typing import Any

from rlinf_bench.reporting.message_limits import cut_bytes, utf8_len

__all__ = ["DLQ_REASON_MAX_CHARS", "SQS_MESSAGE_MAX_BYTES", "SqsDeadLetters"]

#: SQS's limit on one message, body and attributes together (bytes).
SQS_MESSAGE_MAX_BYTES = 256 * 1024
DLQ_REASON_MAX_CHARS = 4000


def _attribute(value: str) -> dict[str, str]:
    return {"DataType": "String", "StringValue": value or "unknown"}


class SqsDeadLetters:
    """Sends dead letters to an SQS queue; the reason and the letter id travel as message attributes."""

    def __init__(self, sqs: Any, queue_url: str) -> None:
        self._sqs = sqs
        self.queue_url = queue_url

    def send(self, body: str, reason: str, *, letter_id: str) -> None:
        attributes = {"reason": _attribute(reason[:DLQ_REASON_MAX_CHARS]), "letter_id": _attribute(letter_id[:256])}
        # A body near SQS's limit plus the attributes would be refused, and the refusal retried forever:
        # cut the copy to fit and say so (the whole body was the intake queue's message, logged with its id).
        budget = (
            SQS_MESSAGE_MAX_BYTES
            - sum(utf8_len(k) + utf8_len(v["DataType"] + v["StringValue"]) for k, v in attributes.items())
            - 512
        )
        text = body or "<empty message body>"
        if utf8_len(text) > budget:
            attributes["body_cut"] = _attribute(f"original body {utf8_len(text)} bytes, cut to fit SQS's 256 KiB")
            text = cut_bytes(text, budget)
        self._sqs.send_message(QueueUrl=self.queue_url, MessageBody=text, MessageAttributes=attributes)
