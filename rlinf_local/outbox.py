"""Where the notifications land on one machine: ``DIR/outbox/email/*.txt`` and ``DIR/outbox/slack/*.json``.

Email: an SQS queue subscribed to the results topic stands in for the email subscription; each SNS
message's text (what an email subscriber receives) becomes one file. Slack: the stack's Slack secret
holds the URL of a webhook on loopback, so the real slack_notifier Lambda posts the Block Kit payload
there, and each post becomes one file.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["EmailOutbox", "SlackOutbox"]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:60].lower() or "message"


def _next_path(folder: Path, stem: str, suffix: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    n = len(list(folder.glob(f"*{suffix}"))) + 1
    return folder / f"{n:03d}-{_slug(stem)}{suffix}"


class SlackOutbox:
    """An incoming-webhook stand-in on loopback that writes each posted payload to a file."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.written: list[Path] = []
        self._lock = threading.Lock()
        outbox = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    payload = json.loads(body)
                except json.JSONDecodeError:
                    self.send_response(400)
                    self.end_headers()
                    return
                outbox.write(payload)
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/services/local/outbox"
        self.thread = threading.Thread(target=self.server.serve_forever, name="slack-outbox", daemon=True)
        self.thread.start()

    def write(self, payload: dict[str, Any]) -> Path:
        with self._lock:
            path = _next_path(self.folder, str(payload.get("text", "slack")), ".json")
            path.write_text(json.dumps(payload, indent=2) + "\n")
            self.written.append(path)
            return path

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class EmailOutbox:
    """Reads the SQS queue subscribed to the results topic and writes each message's text to a file."""

    def __init__(self, folder: Path, sqs: Any, queue_url: str) -> None:
        self.folder = folder
        self.sqs = sqs
        self.queue_url = queue_url
        self.written: list[Path] = []

    @classmethod
    def subscribe(cls, folder: Path, sqs: Any, sns: Any, topic_arn: str) -> EmailOutbox:
        url = sqs.create_queue(QueueName="rlinf-bench-local-email-outbox")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=arn)
        return cls(folder, sqs, url)

    def drain(self) -> list[Path]:
        """Write every message waiting in the queue; returns the new files."""
        new: list[Path] = []
        while True:
            messages = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages", [])
            if not messages:
                self.written += new
                return new
            for m in messages:
                envelope = json.loads(m["Body"])
                subject = str(envelope.get("Subject") or "rlinf-bench")
                path = _next_path(self.folder, subject, ".txt")
                path.write_text(f"Subject: {subject}\n\n{envelope.get('Message', m['Body'])}")
                new.append(path)
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])
