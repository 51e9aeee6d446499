"""In the embedded default a Lambda's warning is one readable line on stderr, not a JSON object on stdout."""

from __future__ import annotations

import types
import uuid

import pytest
from aws_lambda_powertools import Logger

from rlinf_local.embedded import _logs_to_stderr


def test_a_lambda_warning_is_one_line_with_its_fields_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    logger = Logger(service=f"rlinf-bench-test-{uuid.uuid4().hex[:8]}")
    _logs_to_stderr(types.SimpleNamespace(logger=logger))  # type: ignore[arg-type]
    logger.append_keys(function_request_id="r-1")  # the handlers' decorators still work on this formatter

    logger.warning("run failed", extra={"job": "eval-x-r0", "error": "CheckpointError", "reason": None})

    out, err = capsys.readouterr()  # the calling module's folder names the function (functions/<name>/app.py)
    assert out == ""
    assert err.strip() == "warning rlinf_local: run failed (job=eval-x-r0, error=CheckpointError)"


def test_an_exception_follows_its_line_as_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    logger = Logger(service=f"rlinf-bench-test-{uuid.uuid4().hex[:8]}")
    _logs_to_stderr(types.SimpleNamespace(logger=logger))  # type: ignore[arg-type]

    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("handler raised")

    first, *rest = capsys.readouterr().err.strip().splitlines()
    assert first == "error rlinf_local: handler raised"
    assert rest[0] == "Traceback (most recent call last):" and rest[-1] == "ValueError: boom"
