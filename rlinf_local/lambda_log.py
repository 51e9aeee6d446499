"""The Lambdas' Powertools log records as one line a person reads, for the embedded default's terminal.

On AWS each record is a JSON object for CloudWatch Logs Insights. Here it lands among the progress lines,
and a 600-character JSON object per warning reads like a debug dump, so it is reduced to level, function,
message and the fields the handler passed in ``extra``. This is still Powertools' formatter underneath, so
the handlers' ``append_keys`` and ``inject_lambda_context`` keep working; the keys they add (function
name, request id, cold start) are left out of the line.
"""

from __future__ import annotations

import logging
from pathlib import Path

from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

__all__ = ["LambdaLogLine"]

#: what every LogRecord carries; anything else on a record came from the call's ``extra``
_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


class LambdaLogLine(LambdaPowertoolsFormatter):
    """``warning failure_notifier: run failed (job=eval-…-r0, error=CheckpointError)``."""

    def format(self, record: logging.LogRecord) -> str:
        extras = {
            k: v
            for k, v in vars(record).items()
            if k not in _RECORD_FIELDS and not k.startswith("_") and v not in ("", None)
        }
        fields = f" ({', '.join(f'{k}={v}' for k, v in extras.items())})" if extras else ""
        # The Lambdas share one logger (one service name), so the function is the folder of the calling app.py.
        function = Path(record.pathname).parent.name
        line = f"{record.levelname.lower()} {function}: {record.getMessage()}{fields}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line
