"""One redaction for secrets, applied to every exception we raise and every log line we write.

A secret must never reach a log or an error text: Lambda logs are read by more people than hold the secret,
and an error text travels on (the execution history, the failure notice, Slack). What is redacted:

- **Slack incoming-webhook URLs** (anything on ``hooks.slack.com``, and ``…/services/T…/B…/…`` on any host,
  a proxy's): the path after the host is the secret;
- **Step Functions task tokens**: in ``taskToken=…``, ``"taskToken": "…"``, ``RLINF_BENCH_TASK_TOKEN=…`` forms,
  and any bare token (``AQ`` then 100 or more base64 characters, their shape);
- **AWS credentials**: access key ids (``AKIA…``/``ASIA…``), secret access keys and session tokens after their
  names (``aws_secret_access_key = …``, ``"SecretAccessKey": "…"``, ``X-Amz-Security-Token=…``), a bare
  40-character secret key (mixed-case base64, not a hex digest), presigned-URL signatures and credentials;
- **passwords in URLs** (``https://user:password@host``);
- **any value registered with** :func:`mask` (the Slack webhook read from Secrets Manager, a task token read
  from the environment), wherever it appears, whatever its shape: a webhook secret that is not a URL is
  matched by no pattern above.

:class:`RlinfBenchError` redacts its own message, so every error raised on purpose is covered where it is
made; :func:`install_log_redaction` makes every log record redact its message as it is created.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["REDACTED", "install_log_redaction", "mask", "redact"]

REDACTED = "<redacted>"
#: A registered secret shorter than this is not masked (it would blot out ordinary words).
MASK_MIN_CHARS = 8

_B64 = r"[A-Za-z0-9+/=_-]"
_NAMES = (
    r"task[_-]?token|RLINF_BENCH_TASK_TOKEN|aws_secret_access_key|secret_?access_?key|aws_session_token"
    r"|session_?token|x-amz-security-token|x-amz-signature|x-amz-credential|password|passwd"
)
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # A webhook's path is its secret, on hooks.slack.com or wherever a proxy serves it.
    (re.compile(r"(?i)(https?://hooks\.slack\.com/)[^\s'\"<>|)\]]+"), rf"\1{REDACTED}"),
    (re.compile(r"(https?://[^\s/'\"<>|]+/services)/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[^\s'\"<>|)\]]+"), rf"\1/{REDACTED}"),
    # user:password@ in a URL (an MLflow tracking URI with basic auth).
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@:'\"<>]+:[^\s/@'\"<>]+@"), rf"\1{REDACTED}@"),
    # name=value, name: value, "name": "value" (task tokens, AWS secrets, signatures, passwords) ...
    (re.compile(rf"(?i)(\"?\b(?:{_NAMES})\"?\s*[=:]\s*[\"']?)[^\s\"',&;)\]}}]+"), rf"\1{REDACTED}"),
    # ... and a command line's --task-token VALUE.
    (re.compile(r"(?i)(--task[_-]token[\s=]+)\S+"), rf"\1{REDACTED}"),
    (re.compile(rf"(?<!{_B64})AQ{_B64}{{100,}}"), f"{REDACTED} (task token)"),
    (
        re.compile(r"\b(?:AKIA|ASIA|AIDA|AROA|AGPA|ANPA|ANVA|AIPA|APKA|ABIA|ACCA)[A-Z0-9]{16}\b"),
        f"{REDACTED} (AWS key id)",
    ),
]
# A bare secret access key: 40 base64 characters with both cases and a digit (a hex digest or a word has not).
_BARE_KEY = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])")


def _bare_key(match: re.Match[str]) -> str:
    text = match.group(0)
    looks_random = any(c.islower() for c in text) and any(c.isupper() for c in text) and any(c.isdigit() for c in text)
    return REDACTED if looks_random else text


_masked: set[str] = set()
_lock = threading.Lock()


def mask(secret: str) -> str:
    """Register ``secret`` so :func:`redact` replaces it wherever it appears; returns it unchanged."""
    value = secret.strip()
    if len(value) >= MASK_MIN_CHARS:
        with _lock:
            _masked.add(value)
    return secret


def redact(text: object) -> str:
    """``text`` with every secret this module knows replaced by ``<redacted>``."""
    out = str(text)
    if _masked:
        for secret in sorted(_masked, key=len, reverse=True):  # a longer secret holding a shorter one first
            out = out.replace(secret, REDACTED)
    for pattern, replacement in _PATTERNS:
        out = pattern.sub(replacement, out)
    return _BARE_KEY.sub(_bare_key, out)


def _redacting(factory: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a malformed call: logging reports it as it always does
            return record
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, ()
        return record

    make._rlinf_redacting = True  # type: ignore[attr-defined]
    return make


def install_log_redaction() -> None:
    """Make every log record of this process redact its message when it is created (once; idempotent)."""
    current = logging.getLogRecordFactory()
    if not getattr(current, "_rlinf_redacting", False):
        logging.setLogRecordFactory(_redacting(current))
