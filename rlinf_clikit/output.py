"""``--json`` on every command that produces a result: one JSON document on stdout, everything else on stderr."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["add_json_flag", "emit_json", "quiet_stdout"]


def add_json_flag(p: argparse.ArgumentParser, what: str) -> None:
    """``--json``: print ``what`` as one JSON document on stdout (logs, progress and tables go to stderr)."""
    p.add_argument("--json", action="store_true", help=f"print {what} as JSON on stdout; everything else on stderr")


@contextlib.contextmanager
def quiet_stdout(enabled: bool) -> Iterator[None]:
    """With --json, everything but the JSON document (library prints, Lambda logs, progress) goes to stderr."""
    if not enabled:
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield


def emit_json(doc: dict[str, Any] | list[Any] | str) -> None:
    """``doc`` on stdout (a str is taken as JSON text already), flushed so a pipe reader sees it at once."""
    sys.stdout.write((doc if isinstance(doc, str) else json.dumps(doc, indent=2)).rstrip("\n") + "\n")
    sys.stdout.flush()
