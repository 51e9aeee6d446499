"""Every message fits its channel: the service limits, and cutting text with a pointer to the rest.

A message over a service's limit is not shortened by the service, it is refused (SNS, Step Functions)
or mangled (Slack drops the payload with ``invalid_blocks``), and then nobody hears anything. So each
builder measures what it makes against the limits below and, when it is longer, cuts it and says where
the whole text is (the stored report, the result file, the execution history).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "ERROR_TEXT_MAX_CHARS",
    "SFN_STATE_OUTPUT_MAX_BYTES",
    "SLACK_HEADER_MAX_CHARS",
    "SLACK_MAX_BLOCKS",
    "SLACK_SECTION_MAX_CHARS",
    "SLACK_TEXT_MAX_CHARS",
    "SNS_MESSAGE_MAX_BYTES",
    "SNS_SUBJECT_MAX_CHARS",
    "bounded_lines",
    "cut",
    "cut_at_word",
    "cut_bytes",
    "fit_blocks",
    "header",
    "mrkdwn",
    "section",
    "utf8_len",
]

# Amazon SNS API Reference, Publish, parameter Message: "at most 256 KB in size (262,144 bytes, not
# 262,144 characters)"; the subject and the message attributes count towards it too.
SNS_MESSAGE_MAX_BYTES = 262_144
# Amazon SNS API Reference, Publish, parameter Subject: "no line breaks or control characters, and must
# be less than 100 characters long".
SNS_SUBJECT_MAX_CHARS = 99
# AWS Step Functions Developer Guide, "Step Functions service quotas": maximum input or output size for a
# task, state, or execution is 256 KiB of data as a UTF-8 encoded string.
SFN_STATE_OUTPUT_MAX_BYTES = 262_144
# Slack Block Kit reference: section block ``text`` at most 3000 characters; header block ``text`` at most
# 150 characters; "you can include up to 50 blocks in each message".
SLACK_SECTION_MAX_CHARS = 3000
SLACK_HEADER_MAX_CHARS = 150
SLACK_MAX_BLOCKS = 50
# Slack chat.postMessage: the top-level ``text`` is truncated past 40,000 characters and should stay short
# (it is the notification line); we hold it to a section's length.
SLACK_TEXT_MAX_CHARS = 3000
# Ours: one error or failure cause as it travels through the state machine and into messages. The whole
# text stays in the file or execution history the cut names.
ERROR_TEXT_MAX_CHARS = 2000


def utf8_len(text: str) -> int:
    """Size of ``text`` as the AWS limits count it: UTF-8 bytes."""
    return len(text.encode("utf-8"))


def _marker(dropped: int, rest_in: str, unit: str) -> str:
    where = f"; the full text is in {rest_in}" if rest_in else ""
    return f" … [cut: {dropped} more {unit}{where}]"


def cut(text: str, limit: int, *, rest_in: str = "") -> str:
    """``text`` in at most ``limit`` characters; when longer, cut with a note naming ``rest_in``."""
    if len(text) <= limit:
        return text
    keep = limit
    while keep > 0:
        marker = _marker(len(text) - keep, rest_in, "characters")
        if keep + len(marker) <= limit:
            return text[:keep] + marker
        keep = limit - len(marker)
    return text[:limit]  # a limit shorter than the note itself: the bare cut is all that fits


def cut_at_word(text: str, limit: int) -> str:
    """A title in at most ``limit`` characters: when longer, cut after the last whole word that fits, then "…".

    For subjects and headers, which are read at a glance and have no room for a pointer: the whole text is
    in the message body. A first word longer than the limit is cut inside it (there is no better place).
    """
    if len(text) <= limit:
        return text
    room = limit - 1  # the ellipsis
    head = text[: room + 1]
    at = max(head.rfind(" "), head.rfind("\t"))
    kept = head[:at] if at > 0 else text[:room]
    return kept.rstrip(" \t,;:—-") + "…"


def cut_bytes(text: str, limit: int, *, rest_in: str = "") -> str:
    """Like :func:`cut`, counting UTF-8 bytes (for SNS and Step Functions); never splits a character."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    keep = limit
    while keep > 0:
        head = data[:keep].decode("utf-8", errors="ignore")
        marker = _marker(len(data) - utf8_len(head), rest_in, "bytes")
        if utf8_len(head) + utf8_len(marker) <= limit:
            return head + marker
        keep = limit - utf8_len(marker)
    return data[:limit].decode("utf-8", errors="ignore")


def bounded_lines(lines: Sequence[str], *, max_bytes: int, line_chars: int, rest_in: str) -> list[str]:
    """Lines each cut at ``line_chars``, as many as fit in ``max_bytes`` (JSON-quoted), then one line
    saying how many more there are and where they are."""
    out: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        short = cut(line, line_chars, rest_in=rest_in)
        cost = utf8_len(short) + 8  # quotes, comma and a little JSON escaping
        if used + cost > max_bytes:
            out.append(f"… and {len(lines) - i} more: see {rest_in}")
            break
        out.append(short)
        used += cost
    return out


def mrkdwn(text: str) -> dict[str, Any]:
    """A mrkdwn text object that Slack does not pre-process (no auto-linked URLs, channels or @here)."""
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def section(text: str, *, rest_in: str = "") -> dict[str, Any]:
    """A section block holding already-escaped mrkdwn, cut to Slack's limit with a pointer."""
    return {"type": "section", "text": mrkdwn(cut(text, SLACK_SECTION_MAX_CHARS, rest_in=rest_in))}


def header(text: str) -> dict[str, Any]:
    """A header block (plain text, Slack's 150-character limit, cut at a word)."""
    return {"type": "header", "text": {"type": "plain_text", "text": cut_at_word(text, SLACK_HEADER_MAX_CHARS)}}


def _block_chars(block: dict[str, Any]) -> int:
    text = block.get("text")
    if isinstance(text, dict):
        return len(str(text.get("text", "")))
    return sum(len(str(e.get("text", ""))) for e in block.get("elements", []) if isinstance(e, dict))


def fit_blocks(
    blocks: Sequence[dict[str, Any]], *, rest_in: str, max_blocks: int = SLACK_MAX_BLOCKS, max_chars: int = 0
) -> list[dict[str, Any]]:
    """At most ``max_blocks`` blocks (and, with ``max_chars``, that many characters of text); what is left
    out is replaced by one section saying how much and where the full report is. A trailing context block
    (the links) is kept."""
    body = list(blocks)
    tail = [body.pop()] if body and body[-1].get("type") == "context" else []
    kept: list[dict[str, Any]] = []
    used = sum(_block_chars(b) for b in tail)
    room = max_blocks - len(tail) - 1  # one block for the note
    for i, block in enumerate(body):
        size = _block_chars(block)
        fits_count = len(kept) < room or (i == len(body) - 1 and len(kept) == room)
        if not fits_count or (max_chars and used + size > max_chars):
            note = f"… {len(body) - i} more part(s) of this message left out: the full report is {rest_in}"
            return [*kept, section(note), *tail]
        kept.append(block)
        used += size
    return kept + tail
