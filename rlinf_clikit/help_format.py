"""Help formatting shared by the subcommands: prose is wrapped, the example lines are not, and the reST
markup of docstrings used as descriptions (````x````, ``:mod:`x```) is shown as plain text."""

from __future__ import annotations

import argparse
import re
from typing import Any

__all__ = ["DefaultsOnceFormatter", "ExampleFormatter", "plain_help", "readable_help"]

# :mod:`x`, :func:`~a.b`, :class:`x` -> x;  ``x`` -> x.
_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain_help(text: str) -> str:
    """``text`` without reST markup, and with ``%%`` as ``%`` (descriptions are not %-formatted by argparse)."""
    return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text)).replace("%%", "%")


class _Readable(argparse.HelpFormatter):
    """Mixed in before any formatter: descriptions, epilogs and option help lose their reST markup."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return super()._fill_text(plain_help(text), width, indent)

    def _expand_help(self, action: argparse.Action) -> str:
        return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", super()._expand_help(action)))


class ExampleFormatter(_Readable):
    """Wraps descriptions as argparse does, but prints a text starting with ``example`` line by line,
    so a command to copy is never broken across lines."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example"):
            return "\n".join(indent + line for line in plain_help(text).splitlines())
        return super()._fill_text(text, width, indent)


class DefaultsOnceFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Adds ``(default: X)`` to an option's help only where the help does not state its default already, and
    never for an unset default (None, False): each default is printed once."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default is None or action.default is False:
            return text
        return super()._get_help_string(action) or text


def readable_help(parser: argparse.ArgumentParser) -> None:
    """Give ``parser`` and every parser below it (subcommands, a probe's own parsers) the readable formatter."""
    base: Any = parser.formatter_class  # a HelpFormatter subclass in practice (typeshed types it as a callable)
    if isinstance(base, type) and not issubclass(base, _Readable):
        readable: Any = type(f"Readable{base.__name__}", (_Readable, base), {})
        parser.formatter_class = readable
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                readable_help(child)
