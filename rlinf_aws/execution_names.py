"""Names of executions: the checkpoint, a short hash of the eval matrix, and the attempt number.

``<request_id>-m<matrix hash>-a<attempt>``. The same checkpoint with the same matrix always gets the
same name for attempt 1, so duplicate events collapse on Step Functions' own name uniqueness; a
changed matrix is a different evaluation (a new name); a re-run after a failure is the next attempt.
Step Functions allows 80 characters; request ids are at most ~52, so the name always fits.
"""

from __future__ import annotations

import re

from rlinf_bench.contracts.request import EvalRequest
from rlinf_bench.errors import ConfigError

__all__ = ["MAX_EXECUTION_NAME", "execution_name", "matrix_digest", "parse_execution_name"]

MAX_EXECUTION_NAME = 80
_NAME = re.compile(r"^(?P<request_id>.+)-m(?P<digest>[0-9a-f]{8})-a(?P<attempt>[0-9]+)$")


def matrix_digest(request: EvalRequest) -> str:
    """8 hex characters over the canonical JSON of the eval matrix (what runs, not which checkpoint)."""
    return request.digest()


def execution_name(request: EvalRequest, attempt: int | None = None) -> str:
    """The execution (and Job-name base) of ``request`` at ``attempt`` (default: the request's own)."""
    n = request.attempt if attempt is None else attempt
    if n < 1:
        raise ConfigError(f"attempt must be >= 1, got {n}")
    name = f"{request.request_id}-m{matrix_digest(request)}-a{n}"
    if len(name) > MAX_EXECUTION_NAME:
        raise ConfigError(f"execution name {name!r} is longer than {MAX_EXECUTION_NAME} characters")
    return name


def parse_execution_name(name: str) -> tuple[str, str, int] | None:
    """``(request_id, matrix digest, attempt)`` of a name made by :func:`execution_name`, else None."""
    m = _NAME.match(name)
    if m is None:
        return None
    return m["request_id"], m["digest"], int(m["attempt"])
