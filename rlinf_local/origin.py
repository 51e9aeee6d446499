"""What the local commands record as the request's origin: the command as the user typed it, and the lever that
gives the protocol's own episode settings back in their terms (docs/reporting.md, "Fixes in the user's terms").

A ``make demo`` user never passed ``--max-steps``: the demo's short budget is its own, and ``DEMO_ARGS=--paper``
is the lever. A ``pipeline`` without ``--config`` runs the built-in small budget; a config file sets
``max_steps`` in its suites. The verdict that decided nothing names the one that applies.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

__all__ = ["demo_origin", "paper_command", "pipeline_origin", "with_origin"]

#: The episode setting a budget flag overrides, and the flag.
_MAX_STEPS = "max_steps"


def _by_make() -> bool:
    # make exports MAKELEVEL to the commands of its recipes: `make demo` runs `rlinf-bench demo` under it.
    return bool(os.environ.get("MAKELEVEL"))


def paper_command() -> str:
    """``demo --paper`` the way this user starts the demo: ``make demo DEMO_ARGS=--paper`` under make."""
    return "make demo DEMO_ARGS=--paper" if _by_make() else "rlinf-bench demo --paper"


def demo_origin(*, paper: bool, budget: dict[str, Any] | None) -> dict[str, Any]:
    """``make demo`` / ``rlinf-bench demo``: its short horizon comes from the demo, ``--paper`` lifts it (and a
    ``--max-steps`` given on top sets it again)."""
    make = _by_make()
    flag = bool(budget and _MAX_STEPS in budget)
    command = ("make demo" if make else "rlinf-bench demo") + (
        (" DEMO_ARGS=--paper" if make else " --paper") if paper else ""
    )
    if paper and not flag:
        return {"command": command}  # the protocol's own horizon: nothing to lift
    if paper:
        return {
            "command": command,
            "levers": {_MAX_STEPS: "leave --max-steps out of DEMO_ARGS" if make else "leave out --max-steps"},
        }
    # Short: the fix ends a message line; the demo's closing lines say what --paper runs and how long it takes.
    return {
        "command": command,
        "levers": {_MAX_STEPS: f"run {paper_command()}" + (" without --max-steps" if flag else "")},
    }


def pipeline_origin(
    command: str, config: Path | None, budget: dict[str, Any] | None, *, small_budget_steps: int | None = None
) -> dict[str, Any]:
    """``pipeline`` / ``watch``: the flag when one was given, else the config file's suites, else the built-in
    small budget (``small_budget_steps`` its horizon), which only ``--config`` replaces."""
    flag = bool(budget and _MAX_STEPS in budget)
    if config is None:
        steps = f"stops episodes at {small_budget_steps} steps" if small_budget_steps else "shortens episodes"
        lever = f"pass --config FILE without max_steps (the small budget {steps})"
        return {"command": command, "levers": {_MAX_STEPS: f"leave out --max-steps and {lever}" if flag else lever}}
    if flag:
        return {"command": command, "levers": {_MAX_STEPS: "leave out --max-steps"}}
    return {"command": command, "levers": {_MAX_STEPS: f"remove max_steps from the suites in {config}"}}


def with_origin(text: str, origin: dict[str, Any]) -> str:
    """The intake config ``text`` with ``origin`` set, unless the file sets its own."""
    doc: dict[str, Any] = yaml.safe_load(text) or {}
    if "origin" in doc:
        return text
    return str(yaml.safe_dump({**doc, "origin": origin}, sort_keys=False))
