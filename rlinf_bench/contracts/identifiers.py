"""Identifiers that become path segments (result keys, report folders) are checked where they enter.

A hand-written execution input is as trusted as the bucket it names: a ``request_id`` of ``../../x``
would put result files outside the results prefix, a control character would forge log and terminal
lines. :func:`check_request_id` allows what :func:`~rlinf_bench.contracts.request.request_id_for`
derives (letters, digits, ``.``, ``_``, ``-``), :func:`check_path_segments` any text that is safe as
one or more ``/``-separated segments (suite names such as ``robotwin/<task>``, experiment names).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_REQUEST_ID", "check_path_segments", "check_request_id"]

MAX_REQUEST_ID = 128
# fullmatch only: `$` with match() would accept a trailing newline.
_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def check_request_id(value: str) -> str:
    """``value`` when it is a safe request id (or empty: derived later); else ValueError saying what is allowed."""
    if value and (len(value) > MAX_REQUEST_ID or not _REQUEST_ID.fullmatch(value) or ".." in value):
        raise ValueError(
            f"{value!r} is not a valid request id: it becomes a folder of the result paths, so use at most "
            f"{MAX_REQUEST_ID} letters, digits, '.', '_' and '-', starting with a letter or digit, with no '..' "
            "(or leave it empty to derive it from the checkpoint)"
        )
    return value


def check_path_segments(value: str, *, allow_slash: bool = False) -> str:
    """``value`` when every ``/``-separated part is a safe path segment; else ValueError naming the problem."""
    problem = _segment_problem(value, allow_slash=allow_slash)
    if problem:
        raise ValueError(f"{value!r} cannot be used in a result path: {problem}")
    return value


def _segment_problem(value: str, *, allow_slash: bool) -> str:
    if not value:
        return "it is empty"
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in value):
        return "it holds a control or format character (newline, escape, bidi override)"
    if "\\" in value:
        return "it holds a backslash"
    if "/" in value and not allow_slash:
        return "it holds '/'"
    parts = value.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "it has an empty, '.' or '..' segment (no leading, trailing or doubled '/')"
    return ""
