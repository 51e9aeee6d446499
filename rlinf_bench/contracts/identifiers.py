"""Identifiers: one rule for every name the product derives from, or accepts into, a path.

A checkpoint's key names its experiment (``runs/实验/checkpoints/…``, ``café-run``, emoji, 300 characters):
those names are data, kept as they are in the CheckpointRef and the report. What is *derived* from them
(request ids, execution names, Job names, folders of the result paths) must pass every later check, so it
is built by one rule here, :func:`ascii_part`: letters and digits folded to lowercase ASCII (accents
dropped), every other character a ``-``, cut to a length; the request id adds the checkpoint's step and a
hash of its URI, so two experiments whose names fold alike (``alice/训练``, ``bob/训练``) never share an id.

A hand-written execution input is as trusted as the bucket it names: a ``request_id`` of ``../../x``
would put result files outside the results prefix, a control character would forge log and terminal
lines. :func:`check_request_id` allows what :func:`~rlinf_bench.contracts.request.request_id_for`
derives (letters, digits, ``.``, ``_``, ``-``, at most :data:`MAX_REQUEST_ID`, so that the execution
name built on it fits Step Functions' 80 characters), :func:`check_path_segments` any text that is safe as
one or more ``/``-separated segments (suite names such as ``robotwin/<task>``).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_REQUEST_ID", "ascii_part", "check_path_segments", "check_request_id"]

#: ``<request id>-m<8 hex>-a<attempt>`` must fit Step Functions' 80 characters up to attempt 9999.
MAX_REQUEST_ID = 64
# fullmatch only: `$` with match() would accept a trailing newline.
_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def ascii_part(text: str, max_len: int) -> str:
    """The readable ASCII part of a name: ``café-run`` -> ``cafe-run``, ``实验`` -> ``''``, deterministic.

    Letters and digits become lowercase ASCII (compatibility forms and accents folded: ``²`` -> ``2``,
    ``é`` -> ``e``), any other character ``-``; leading and trailing ``-`` go, then the first ``max_len``
    characters are kept. An ASCII name keeps exactly the form request ids have always had.
    """
    folded = unicodedata.normalize("NFKD", text.lower())
    kept = "".join(c if c.isascii() and c.isalnum() else "-" for c in folded if not unicodedata.combining(c))
    return kept.strip("-")[:max_len]


def check_request_id(value: str) -> str:
    """``value`` when it is a safe request id (or empty: derived later); else ValueError saying what is allowed."""
    if value and (len(value) > MAX_REQUEST_ID or not _REQUEST_ID.fullmatch(value) or ".." in value):
        raise ValueError(
            f"{value[:80]!r} is not a valid request id: it becomes a folder of the result paths, so use at most "
            f"{MAX_REQUEST_ID} letters, digits, '.', '_' and '-', starting with a letter or digit, with no '..' "
            "(or leave it empty to derive it from the checkpoint)"
        )
    return value


def check_path_segments(value: str, *, allow_slash: bool = False) -> str:
    """``value`` when every ``/``-separated part is a safe path segment; else ValueError naming the problem."""
    problem = _segment_problem(value, allow_slash=allow_slash)
    if problem:
        raise ValueError(f"{value[:80]!r} cannot be used in a result path: {problem}")
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
