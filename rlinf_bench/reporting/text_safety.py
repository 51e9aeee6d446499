"""One escaping layer for every text sink: terminals and email, Slack mrkdwn, Markdown.

Experiment names come from S3 keys, task names, errors and provenance from files anyone with write
access to the bucket can shape, and causes from whatever a Job printed. None of that may act as markup
where it is shown. Every message builder passes user text through exactly one of these functions
(HTML pages use Jinja's autoescape instead, see :mod:`rlinf_bench.reporting.templating`):

- :func:`plain` for email and terminals: ANSI/OSC escape sequences removed, every other control, format
  (bidirectional overrides, zero-width characters, U+FEFF...) or separator character shown visibly as
  ``\\xNN`` / ``\\uNNNN``; :func:`error_line` is an error's message for a terminal, redacted too.
- :func:`slack` for Slack mrkdwn: :func:`plain`, then ``&``, ``<`` and ``>`` as entities, so no user text
  forms a mention (``<!channel>``, ``<@U…>``), a special command or a link (``<http://…|…>``).
  :func:`slack_link` is the only way a link gets into a Slack message, and only for URIs we built.
- :func:`markdown` for report.md and ``compare``: :func:`plain` on one line, then the characters that open
  links, images, autolinks, HTML and code spans backslash-escaped.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

from rlinf_bench.redaction import redact

__all__ = [
    "error_line",
    "markdown",
    "markdown_code",
    "markdown_link",
    "plain",
    "slack",
    "slack_code",
    "slack_link",
    "slack_plain",
]

# ESC-introduced sequences (ECMA-48): CSI (colours, cursor moves), OSC (titles, OSC 8 hyperlinks) ended by
# BEL or ST, the string controls DCS/SOS/PM/APC, and the short two-byte escapes. Their 8-bit forms
# (U+009B CSI, U+009D OSC, ...) are C1 controls: shown visibly one by one, which defuses them without
# guessing where a sequence ends and swallowing the text after it.
_ESCAPE_SEQUENCE = re.compile(
    r"""
      \x1b\[ [0-?]* [ -/]* [@-~]              # CSI ... final byte
    | \x1b\] [^\x07\x1b]* (?:\x07|\x1b\\)?    # OSC ... BEL | ST (unterminated: to the end)
    | \x1b[PX^_] [^\x1b]* (?:\x1b\\)?          # DCS, SOS, PM, APC ... ST
    | \x1b [ -/]* [0-~]                       # two-byte and nF escapes
    | \x1b                                    # a lone ESC
    """,
    re.VERBOSE,
)
# Characters that are not text to a reader: controls (Cc), format characters (Cf: the bidirectional overrides
# and isolates of Trojan Source, zero-width spaces and joiners, U+FEFF, soft hyphens, tag characters),
# line and paragraph separators outside of "\n" (Zl, Zp) and lone surrogates (Cs). Each is shown by its code.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
NEWLINE_MARK = " ⏎ "  # a newline inside a one-line field, shown (a silent join would hide the break)


def _visible(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _is_control(ch: str) -> bool:
    return unicodedata.category(ch) in _HIDDEN_CATEGORIES


def plain(text: object, *, multiline: bool = False) -> str:
    """``text`` safe for a terminal or a mail client: escape sequences removed, other controls shown.

    With ``multiline`` newlines (and tabs) are kept, CRLF becomes LF; without it a newline is shown as
    ``⏎`` so one field cannot start a line of its own (a forged ``Status:`` line) and a tab is a space.
    """
    raw = _ESCAPE_SEQUENCE.sub("", str(text)).replace("\r\n", "\n")
    out: list[str] = []
    for ch in raw:
        if ch == "\n":
            out.append("\n" if multiline else NEWLINE_MARK)
        elif ch == "\t":
            out.append("\t" if multiline else " ")
        elif _is_control(ch):
            out.append(_visible(ch))
        else:
            out.append(ch)
    return "".join(out)


def error_line(exc: BaseException) -> str:
    """The message of an error we raised on purpose, with its notes (``result: FILE``) after it, terminal-safe:
    printed once, and nothing else prints it (no log line repeats it)."""
    notes = [str(n) for n in getattr(exc, "__notes__", ())]
    return plain(redact("; ".join([str(exc), *notes])), multiline=True)


def slack(text: object, *, multiline: bool = False) -> str:
    """User text for a Slack mrkdwn field: no mention, command, channel link or link can form.

    Slack reads ``&``, ``<`` and ``>`` as control characters and wants them as entities. Send the text
    in a text object with ``verbatim: true`` (:func:`rlinf_bench.reporting.message_limits.mrkdwn`) so bare
    URLs, ``#channel`` and ``@here`` are not auto-linked either.
    """
    return plain(text, multiline=multiline).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_plain(text: object) -> str:
    """User text for a Slack ``plain_text`` object (a header): no markup is parsed there, but Slack's own
    control characters are still shown as look-alikes (``‹ ›``) so nothing can read as a mention or link
    whether or not a client decodes entities in plain text."""
    return plain(text).replace("<", "‹").replace(">", "›")


def slack_code(text: object) -> str:
    """User text as inline code in mrkdwn; a backtick in it cannot end the code span."""
    return "`" + slack(text).replace("`", "'") + "`"


_LINK_SAFE = "/:@!$'()*+,;=-._~%#?"  # URI characters kept as they are; '|', '<', '>', '&', space... are encoded


# The schemes of the URIs we build (report site, report files, results prefix, relative plot paths).
_LINK_SCHEMES = frozenset({"https", "http", "s3", "file", ""})


def _linkable(uri: str) -> bool:
    scheme = uri.split(":", 1)[0].lower() if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", uri) else ""
    return scheme in _LINK_SCHEMES


def slack_link(uri: str, label: str) -> str:
    """``<uri|label>`` for a URI we built (results, report files, the report site); label escaped.

    The URI is percent-encoded outside the URI characters, so neither a ``|`` nor a ``>`` from an
    experiment name inside the path can end the link or change its text. A scheme we never build
    (``javascript:``, ``data:``) gives escaped text, not a link.
    """
    if not _linkable(uri):
        return slack(f"{label}: {uri}")
    # '&' separates a presigned URL's query parameters: percent-encoding it would break the signature,
    # so it stays, written as Slack's entity (Slack decodes &amp; in link targets).
    target = quote(plain(uri), safe=_LINK_SAFE + "&").replace("&", "&amp;")
    return f"<{target}|{slack(label)}>"


# Characters that open a link ([ ] and the image's !), an autolink or HTML (< >), an entity (&), a code
# span (`), a table cell (|) or an escape (\). CommonMark lets any ASCII punctuation be backslash-escaped.
_MARKDOWN_SPECIAL = re.compile(r"([\\`\[\]<>&|!@])")
# GFM turns bare URLs and www. names into links: escape the ':' / '.' that its autolink rule needs.
_BARE_URL = re.compile(r"(?i)\b(https?|ftp|mailto|file|javascript|data)(:)|\b(www)(\.)")


def markdown(text: object) -> str:
    """User text for one Markdown line (heading, list item, table cell): it renders as the same text.

    Links, images, autolinks, raw HTML, entities and code spans cannot form; a newline is shown
    (``⏎``), so the text cannot start a block of its own (a heading, a link reference definition).
    """
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", plain(text))
    return _BARE_URL.sub(lambda m: f"{m.group(1) or m.group(3)}\\{m.group(2) or m.group(4)}", escaped)


def markdown_code(text: object) -> str:
    """User text as a Markdown code span: fenced by more backticks than it holds, so it cannot break out."""
    body = plain(text)
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def markdown_link(uri: str, label: str) -> str:
    """``[label](uri)`` for a URI we built; the URI percent-encoded so a ``)`` or space cannot end it."""
    if not _linkable(uri):
        return f"{markdown(label)}: {markdown(uri)}"
    return f"[{markdown(label)}]({quote(plain(uri), safe=_LINK_SAFE.replace('(', '').replace(')', ''))})"
