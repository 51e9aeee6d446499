"""Log lines that are safe to show on a terminal: redacted, and escaped like every other terminal text.

A log line often carries field text (a video name, a request id, a Job's cause): data that anyone who can
write a result file shapes. The command line's log handler formats every record through
:class:`TerminalLogFormatter`: secrets redacted (:func:`rlinf_bench.redaction.redact`), escape sequences
removed and every other control or format character shown (:func:`rlinf_bench.reporting.text_safety.plain`);
a newline inside a message is shown as ``⏎`` so no field can forge a log line of its own. A traceback keeps
its lines, each escaped the same way.
"""

from __future__ import annotations

import logging
from typing import Any, TextIO

from rlinf_bench.redaction import install_log_redaction, redact
from rlinf_bench.reporting.text_safety import plain

__all__ = ["LOG_FORMAT", "TerminalLogFormatter", "terminal_log_handler"]

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class TerminalLogFormatter(logging.Formatter):
    """A formatter whose every line is redacted and terminal-safe."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return plain(redact(super().formatMessage(record)))

    def formatException(self, ei: Any) -> str:
        return plain(redact(super().formatException(ei)), multiline=True)

    def formatStack(self, stack_info: str) -> str:
        return plain(redact(super().formatStack(stack_info)), multiline=True)


def terminal_log_handler(stream: TextIO, fmt: str = LOG_FORMAT) -> logging.Handler:
    """A handler writing safe lines to ``stream``; installing it also makes every record redact its message."""
    install_log_redaction()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(TerminalLogFormatter(fmt))
    return handler
