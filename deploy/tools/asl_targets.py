"""Check what the ASL validators leave out: every transition of a state machine lands on a state of its scope.

    python deploy/tools/asl_targets.py statemachine/evaluate_checkpoint.asl.json

Checked in every scope (the top level, each Parallel branch, each Map's ItemProcessor/Iterator):
``StartAt``, ``Next``, ``Default``, ``Choices[].Next`` and ``Catch[].Next`` name a state of that scope; every
state either ends (``End``, Succeed, Fail) or has a way on; every state can be reached from ``StartAt``. The
definition is JSONPath only: no JSONata, and no indexed paths such as ``$.a[0].b`` (moto's engine, which the
workflow tests run on, reads those as lists). Exit 1 with one line per problem.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_INDEXED_PATH = re.compile(r"^\$\S*\[\d+\]")


def _targets(state: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(where, target) for every transition out of one state."""
    if "Next" in state:
        yield "Next", state["Next"]
    if "Default" in state:
        yield "Default", state["Default"]
    for i, choice in enumerate(state.get("Choices", [])):
        if "Next" in choice:
            yield f"Choices[{i}].Next", choice["Next"]
    for i, catch in enumerate(state.get("Catch", [])):
        yield f"Catch[{i}].Next", catch.get("Next")


def _children(state: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, nested state machine) for a Parallel's branches and a Map's item processor."""
    for i, branch in enumerate(state.get("Branches", [])):
        yield f"Branches[{i}]", branch
    for key in ("ItemProcessor", "Iterator"):
        if isinstance(state.get(key), dict):
            yield key, state[key]


def check_scope(machine: dict[str, Any], where: str = "") -> list[str]:
    """Problems in one scope and, recursively, in the scopes nested in its states."""
    states: dict[str, Any] = machine.get("States") or {}
    problems: list[str] = []
    if not states:
        return [f"{where or 'top level'}: no States"]
    known = ", ".join(sorted(states))
    start = machine.get("StartAt")
    if start not in states:
        problems.append(f"{where}StartAt -> {start!r} is not a state here (states: {known})")
    if machine.get("QueryLanguage", "JSONPath") != "JSONPath":
        problems.append(f"{where}QueryLanguage {machine['QueryLanguage']!r}: the workflow is JSONPath only")
    edges: dict[str, set[str]] = {}
    for name, state in states.items():
        here = f"{where}States.{name}"
        edges[name] = set()
        if state.get("QueryLanguage", "JSONPath") != "JSONPath":
            problems.append(f"{here}: QueryLanguage {state['QueryLanguage']!r}; the workflow is JSONPath only")
        for what, target in _targets(state):
            if target in states:
                edges[name].add(target)
            else:
                problems.append(f"{here}.{what} -> {target!r} is not a state here (states: {known})")
        ends = state.get("End") is True or state.get("Type") in ("Succeed", "Fail")
        if not ends and not edges[name] and state.get("Type") != "Choice":
            problems.append(f"{here}: neither End nor Next; add one")
        for sub, child in _children(state):
            problems += check_scope(child, f"{here}.{sub}.")
    seen: set[str] = set()
    todo = [start] if start in states else []
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += edges[name]
    problems += [f"{where}States.{name}: unreachable from StartAt" for name in states if name not in seen]
    return problems


def indexed_paths(node: Any, where: str = "$") -> list[str]:
    """Every string that is an indexed JSONPath such as ``$.a[0].b``."""
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in indexed_paths(v, f"{where}.{k}")]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in indexed_paths(v, f"{where}[{i}]")]
    if isinstance(node, str) and _INDEXED_PATH.match(node):
        return [f"{where}: indexed path {node!r}; pass the element through a Map or Parameters instead"]
    return []


def check_file(path: Path) -> list[str]:
    """Every problem in an ASL file, or a single line saying why it cannot be read."""
    try:
        machine = json.loads(path.read_text())
    except FileNotFoundError:
        return [f"{path}: no such file"]
    except json.JSONDecodeError as exc:
        return [f"{path}: not JSON ({exc})"]
    return check_scope(machine) + indexed_paths(machine)


def main(argv: list[str] | None = None) -> int:
    """Print the problems of each file given; exit 1 if there is any."""
    paths = [Path(a) for a in (sys.argv[1:] if argv is None else argv)]
    if not paths:
        print("usage: asl_targets.py FILE.asl.json ...", file=sys.stderr)
        return 2
    failed = False
    for path in paths:
        problems = check_file(path)
        for line in problems:
            print(f"{path}: {line}")
        if not problems:
            print(f"{path}: every transition lands on a state of its scope")
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
