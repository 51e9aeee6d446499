"""Run the real Lambda handlers (functions/<name>/app.py) in this process when moto invokes a function.

moto's Lambda without Docker answers every invoke with a canned payload. This replaces that answer with
the handler's: synchronous invokes (Step Functions tasks) get the handler's return value, or moto's
``FunctionError: Unhandled`` with ``{errorType, errorMessage}`` when it raises, so Retry and Catch
behave as on AWS. Asynchronous invokes (SNS deliveries) never raise into the sender: a failing handler's
event goes to the function's dead-letter queue, as Lambda does after its retries.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import sys
import threading
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["InProcessLambdas", "LocalLambdaContext", "environment", "load_app"]

Handler = Callable[[Any, Any], Any]


@dataclass
class LocalLambdaContext:
    """The one stand-in for Lambda's context object (what Powertools reads): the embedded default's
    in-process handlers and SQS poller pass it, and tests import it from here."""

    function_name: str = "checkpoint_router"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_stream_name: str = "local"
    timeout_ms: int = 300_000

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return self.timeout_ms


@contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """``values`` set in ``os.environ`` while the block runs; afterwards every one of them is as it was (unset
    ones unset again)."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def load_app(path: Path, module_name: str, env: Mapping[str, str]) -> ModuleType:
    """Import ``functions/<name>/app.py`` under a unique module name, with ``env`` set while it imports
    (the handlers read their settings at import, as in a Lambda container)."""
    with environment(env):
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load Lambda code {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # as an import would: pydantic looks models' modules up there
        spec.loader.exec_module(module)
        return module


def _real_sns_urls(event: Any) -> Any:
    """moto's SNS -> Lambda event carries the placeholder "EXAMPLE" where AWS puts the signing-certificate
    and unsubscribe URLs, which Powertools' SnsModel rejects. Give them URL-shaped values (adaptation)."""
    for record in event.get("Records", []) if isinstance(event, dict) else []:
        sns = record.get("Sns", {})
        for key in ("SigningCertUrl", "UnsubscribeUrl"):
            if sns.get(key) == "EXAMPLE":
                sns[key] = "https://sns.us-east-1.amazonaws.com/moto-placeholder"
    return event


class InProcessLambdas:
    """Function name -> handler; :meth:`installed` patches moto to call them."""

    def __init__(self) -> None:
        self.handlers: dict[str, Handler] = {}
        self.dead_letter_queues: dict[str, str] = {}  # function name -> SQS queue URL
        self.invocations: dict[str, int] = {}
        self.errors: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self.sqs_factory: Callable[[], Any] | None = None

    def register(self, name: str, handler: Handler, *, dead_letter_queue_url: str = "") -> None:
        self.handlers[name] = handler
        if dead_letter_queue_url:
            self.dead_letter_queues[name] = dead_letter_queue_url

    def _lookup(self, function_name: str) -> tuple[str, Handler]:
        name = function_name.split(":function:")[-1].split(":")[0]
        if name not in self.handlers:
            raise KeyError(f"no in-process handler for Lambda function {name!r}; known: {sorted(self.handlers)}")
        return name, self.handlers[name]

    def call(self, function_name: str, event: Any) -> tuple[Any, bool]:
        """(payload, failed). A raising handler yields Lambda's error document and failed=True."""
        name, handler = self._lookup(function_name)
        with self._lock:
            self.invocations[name] = self.invocations.get(name, 0) + 1
        try:
            return handler(event, LocalLambdaContext(name)), False
        except Exception as exc:
            self.errors.append((name, f"{type(exc).__name__}: {exc}"))
            log.info("Lambda %s raised %s: %s", name, type(exc).__name__, exc)
            doc = {
                "errorType": type(exc).__name__,
                "errorMessage": str(exc),
                "stackTrace": traceback.format_exception(exc)[-5:],
            }
            return doc, True

    def _invoke_sync(self, function_name: str, body: Any, response_headers: dict[str, str]) -> bytes:
        event = json.loads(body) if body else {}
        payload, failed = self.call(function_name, event)
        if failed:
            response_headers["x-amz-function-error"] = "Unhandled"
        return json.dumps(payload, default=str).encode()

    def _invoke_async(self, function_name: str, body: Any) -> bytes:
        event = _real_sns_urls(json.loads(body) if body else {})
        payload, failed = self.call(function_name, event)
        if failed:
            name, _ = self._lookup(function_name)
            self._dead_letter(name, event, payload)
        return json.dumps(payload, default=str).encode()

    def _dead_letter(self, name: str, event: Any, error: Any) -> None:
        url = self.dead_letter_queues.get(name)
        if not url or self.sqs_factory is None:
            log.error("Lambda %s failed on an async event and has no DLQ: %s", name, error)
            return
        self.sqs_factory().send_message(
            QueueUrl=url,
            MessageBody=json.dumps(event),
            MessageAttributes={
                "ErrorCode": {"DataType": "Number", "StringValue": "200"},
                "ErrorMessage": {"DataType": "String", "StringValue": str(error.get("errorMessage", ""))[:1000]},
            },
        )

    @contextmanager
    def installed(self) -> Iterator[InProcessLambdas]:
        """Patch moto's Lambda backends for the duration of the block."""
        from moto.awslambda.models import LambdaFunction
        from moto.awslambda_simple.models import LambdaSimpleBackend

        dispatcher = self
        original_sync = LambdaSimpleBackend.invoke
        original_async = LambdaFunction.invoke

        def sync(
            self: Any, function_name: str, qualifier: Any, body: Any, headers: Any, response_headers: Any
        ) -> bytes:
            return dispatcher._invoke_sync(function_name, body, response_headers)

        def asynchronous(self: Any, body: Any, request_headers: Any, response_headers: Any) -> bytes:
            return dispatcher._invoke_async(self.function_name, body)

        LambdaSimpleBackend.invoke = sync  # type: ignore[method-assign]
        LambdaFunction.invoke = asynchronous  # type: ignore[method-assign]
        try:
            yield self
        finally:
            LambdaSimpleBackend.invoke = original_sync  # type: ignore[method-assign]
            LambdaFunction.invoke = original_async  # type: ignore[method-assign]
