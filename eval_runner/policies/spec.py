"""Parsing of policy specs: ``scheme:target?key=value&key=value``.

A spec is one string so it fits on a command line, in an ``EvalRequest`` and in a result file, and
so two runs that used the same policy can be recognised by comparing strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from rlinf_bench.errors import PolicyError

OptionValue = str | int | float | bool


@dataclass(frozen=True)
class PolicySpec:
    """A parsed policy spec."""

    raw: str
    scheme: str
    target: str
    options: dict[str, OptionValue] = field(default_factory=dict)


def parse_spec(raw: str) -> PolicySpec:
    """Split ``scheme:target?opts`` into its parts; options are typed (int, float, bool, else str).

    The query is split off at the *last* ``?`` so a ``server:`` URL keeps its own path.
    """
    text = raw.strip()
    scheme, sep, rest = text.partition(":")
    if not sep or not scheme or not rest:
        raise PolicyError(
            f"policy spec {raw!r} is not of the form SCHEME:TARGET (e.g. builtin:zero, builtin:demo, "
            "server:ws://127.0.0.1:8000, python:my_pkg.policies:make_policy)"
        )
    target, qmark, query = rest.rpartition("?")
    if not qmark:
        target, query = rest, ""
    return PolicySpec(raw=text, scheme=scheme.lower(), target=target, options=parse_options(query, raw))


def parse_options(query: str, raw: str) -> dict[str, OptionValue]:
    """Parse ``a=1&b=x`` into typed values; a repeated or empty key is an error."""
    options: dict[str, OptionValue] = {}
    if not query:
        return options
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError as exc:
        raise PolicyError(f"policy spec {raw!r}: options {query!r} are not key=value pairs joined by '&'") from exc
    for key, value in pairs:
        if key in options:
            raise PolicyError(f"policy spec {raw!r}: option {key!r} is given twice; keep one")
        options[key] = _typed(value)
    return options


def _typed(value: str) -> OptionValue:
    lowered = value.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value
