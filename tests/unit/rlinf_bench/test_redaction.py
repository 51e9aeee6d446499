"""One redaction for secrets: in every error we raise and every log line, whatever the secret's shape."""

from __future__ import annotations

import io
import logging
import re

import pytest

from rlinf_bench.errors import ConfigError, StorageError
from rlinf_bench.log_safety import terminal_log_handler
from rlinf_bench.redaction import REDACTED, install_log_redaction, mask, redact

WEBHOOK = "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX"
TOKEN = "AQCEAAAAKgAAAAMAAAAAAAAAA" + "x9Y8z7W6v5U4t3S2r1Q0" * 20
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

SECRETS_IN_TEXT = [
    (f"POST {WEBHOOK} failed", "aBcDeFgHiJkLmNoPqRsTuVwX"),
    ("POST http://127.0.0.1:8080/services/T000/B000/XXXXYYYY failed", "XXXXYYYY"),
    (f"send_task_success(taskToken={TOKEN})", TOKEN),
    (f'{{"taskToken": "{TOKEN[:40]}"}}', TOKEN[:40]),
    (f"env RLINF_BENCH_TASK_TOKEN={TOKEN[:30]} set", TOKEN[:30]),
    (f"job --task-token {TOKEN[:30]} started", TOKEN[:30]),
    (f"an error quoting the bare token {TOKEN}", TOKEN),
    (f"aws_secret_access_key = {SECRET_KEY}", SECRET_KEY),
    (f'{{"SecretAccessKey": "{SECRET_KEY}", "SessionToken": "IQoJb3JpZ2luX2VjE"}}', "IQoJb3JpZ2luX2VjE"),
    (f"credentials: {SECRET_KEY} in the file", SECRET_KEY),
    ("the key id AKIAIOSFODNN7EXAMPLE refused", "AKIAIOSFODNN7EXAMPLE"),
    ("https://b.s3.amazonaws.com/k?X-Amz-Credential=ASIAX%2F1&X-Amz-Signature=deadbeef", "deadbeef"),
    ("https://admin:s3cr3tpass@mlflow.example/api/2.0", "s3cr3tpass"),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS_IN_TEXT)
def test_each_secret_shape_is_redacted_and_the_rest_of_the_text_kept(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and REDACTED in out
    before, _, after = text.partition(secret)
    assert out.startswith(before[:8]) and out.endswith(after)  # the text around the secret stays


@pytest.mark.parametrize(
    "text",
    [
        "git sha 0123456789abcdef0123456789abcdef01234567",  # a hex digest of 40 characters
        "image digest sha256:" + "ab12" * 16,
        "s3://bucket/results/exp-s100/m1a2b3c4/libero_spatial/run0.json",
        "the signature of the request is fine; token count 3",
        "libero_spatial run 2: field max_steps differs (220 vs 999)",
    ],
)
def test_ordinary_text_is_left_as_it_is(text: str) -> None:
    assert redact(text) == text


def test_a_masked_secret_of_any_shape_is_redacted_wherever_it_appears() -> None:
    secret = "not-a-url-but-the-webhook-secret-9f8e7d"
    assert redact(f"unknown url type: {secret!r}") == f"unknown url type: {secret!r}"
    mask(secret)
    assert secret not in redact(f"unknown url type: {secret!r}")
    mask("short")  # too short to mask: it would blot out ordinary words
    assert redact("a short word") == "a short word"


def test_every_error_we_raise_carries_its_message_redacted() -> None:
    err = ConfigError(f"cannot post to {WEBHOOK}")
    assert "aBcDeFgHiJkLmNoPqRsTuVwX" not in str(err) and "hooks.slack.com" in str(err)
    assert SECRET_KEY not in str(StorageError(f"cannot read s3://b/k: aws_secret_access_key={SECRET_KEY}"))


def test_log_records_redact_their_message_as_they_are_made(caplog: pytest.LogCaptureFixture) -> None:
    install_log_redaction()
    with caplog.at_level(logging.INFO):
        logging.getLogger("rlinf_bench.test").info("posting to %s with %s", WEBHOOK, f"taskToken={TOKEN}")
    assert "aBcDeFgHiJkLmNoPqRsTuVwX" not in caplog.text and TOKEN not in caplog.text


def test_the_terminal_log_handler_escapes_field_text_and_redacts_tracebacks() -> None:
    stream = io.StringIO()
    logger = logging.getLogger("rlinf_bench.test.terminal")
    logger.addHandler(terminal_log_handler(stream))
    logger.propagate = False
    try:
        logger.warning("video %s not read", "run0\x1b[2J\x1b]0;pwned\x07\u202e.mp4\r\nINFO forged line\u200b")
        try:
            raise ValueError(f"unknown url type: {WEBHOOK}\x1b[31m")
        except ValueError:
            logger.exception("posting failed")
    finally:
        logger.handlers.clear()
        logger.propagate = True
    out = stream.getvalue()
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u202a-\u202e\u2066-\u2069]", out)
    assert "\\u202e" in out and "\\u200b" in out and "⏎ INFO forged line" in out
    assert "aBcDeFgHiJkLmNoPqRsTuVwX" not in out and "Traceback" in out
