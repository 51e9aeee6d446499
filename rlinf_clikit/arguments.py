"""Arguments that several commands share, so they are spelt the same everywhere (docs/embedded.md, "One grammar").

The grammar: what a command works on comes first, as a positional argument (``pipeline CHECKPOINT``,
``trigger CHECKPOINT``, ``evaluate CHECKPOINT``, ``watch ROOT``); the option spelling (``--checkpoint``,
``--root``) is an alias kept for scripts written against earlier versions. The evaluation budget is
``--runs``, ``--trials`` and ``--max-steps`` on every command that starts evaluations.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["UsageError", "add_budget_arguments", "add_target_argument", "budget_overrides", "target_of"]


class UsageError(ValueError):
    """Arguments that do not fit together (a target given twice, none given, a budget below 1); the message
    says what to type instead. The commands print it as they print their own input errors (exit status 2)."""


def add_target_argument(
    p: argparse.ArgumentParser, name: str, *, metavar: str, help: str, required: bool = True
) -> None:
    """A positional ``name`` (shown as ``metavar``) and its alias ``--name``; :func:`target_of` reads either."""
    p.add_argument(name, nargs="?", default=None, metavar=metavar, help=help + f" (also --{name} {metavar})")
    p.add_argument(
        f"--{name}", dest=f"{name}_option", default=None, metavar=metavar, help=f"alias of the positional {metavar}"
    )
    p.set_defaults(**{f"_{name}_required": required, f"_{name}_metavar": metavar})


def target_of(args: argparse.Namespace, name: str) -> str | None:
    """The value given positionally or as ``--name``; a UsageError when both differ, or when a required one is missing."""
    positional, option = getattr(args, name, None), getattr(args, f"{name}_option", None)
    metavar = getattr(args, f"_{name}_metavar", name.upper())
    command = getattr(args, "command", None) or "COMMAND"
    if positional is not None and option is not None and str(positional) != str(option):
        raise UsageError(
            f"two {metavar}s given: {positional} (positional) and --{name} {option}; give it once, "
            f"e.g. rlinf-bench {command} {positional}"
        )
    value = positional if positional is not None else option
    if value is None and getattr(args, f"_{name}_required", False):
        raise UsageError(f"no {metavar} given: rlinf-bench {command} {metavar} (or --{name} {metavar})")
    return None if value is None else str(value)


def add_budget_arguments(
    p: argparse.ArgumentParser, *, title: str, defaults: dict[str, int] | None = None, what: str = ""
) -> None:
    """``--runs``, ``--trials``, ``--max-steps`` and ``--videos`` in one argument group; without ``defaults`` each
    is None (the config's value stands) and ``what`` says what they override."""
    d = defaults or {}
    group = p.add_argument_group(title)

    def default_text(key: str) -> str:
        return f"default {d[key]}" if key in d else f"default: {what}"

    group.add_argument(
        "--runs", type=int, default=d.get("runs"), metavar="N", help=f"runs per suite ({default_text('runs')})"
    )
    group.add_argument(
        "--trials",
        type=int,
        default=d.get("trials"),
        metavar="N",
        help=f"trials per task, one per initial state ({default_text('trials')})",
    )
    group.add_argument(
        "--max-steps",
        type=int,
        default=d.get("max_steps"),
        metavar="N",
        help=f"episode horizon in policy steps ({default_text('max_steps')})",
    )
    group.add_argument(
        "--videos",
        type=int,
        default=d.get("videos"),
        metavar="N",
        help="episode videos kept per task and run, failures first; 0 records none and renders no frame for "
        "them (default: the config's, else 2)",
    )


#: The budget flags and the least value each takes: a run needs an episode; a video budget may be 0.
_BUDGET_MINIMUM = {"runs": 1, "trials": 1, "max_steps": 1, "videos": 0}


def budget_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The budget flags that were given (``runs``, ``trials``, ``max_steps``, ``videos``), each checked against its
    least value."""
    given = {k: getattr(args, k, None) for k in _BUDGET_MINIMUM}
    for key, value in given.items():
        if value is not None and value < _BUDGET_MINIMUM[key]:
            raise UsageError(f"--{key.replace('_', '-')} must be >= {_BUDGET_MINIMUM[key]}, got {value}")
    return {k: v for k, v in given.items() if v is not None}
