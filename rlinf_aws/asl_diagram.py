"""Draw the state machine from its ASL (Mermaid), so docs/workflow.md never drifts from the definition."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["ASL_PATH", "mermaid"]

ASL_PATH = Path(__file__).resolve().parents[1] / "statemachine" / "evaluate_checkpoint.asl.json"


def _edges(states: dict[str, Any], prefix: str, lines: list[str]) -> None:
    for name, state in states.items():
        node = f"{prefix}{name}"
        kind = state["Type"]
        shape = {"Choice": "{%s}", "Succeed": "([%s])", "Fail": "([%s])"}.get(kind, "[%s]")
        lines.append(f"    {node}{shape % name}")
        if "Next" in state:
            lines.append(f"    {node} --> {prefix}{state['Next']}")
        for catch in state.get("Catch", []):
            lines.append(f'    {node} -. "{" ".join(catch["ErrorEquals"])}" .-> {prefix}{catch["Next"]}')
        if kind == "Map":
            inner = state["ItemProcessor"]
            lines.append(f'    subgraph {node}_items ["{name}: one per item"]')
            _edges(inner["States"], f"{node}_", lines)
            lines.append("    end")
            lines.append(f"    {node} --> {node}_{inner['StartAt']}")
        if kind == "Parallel":
            for i, branch in enumerate(state["Branches"]):
                lines.append(f'    subgraph {node}_b{i} ["branch {i + 1}"]')
                _edges(branch["States"], f"{node}_b{i}_", lines)
                lines.append("    end")
                lines.append(f"    {node} --> {node}_b{i}_{branch['StartAt']}")


def mermaid(definition: dict[str, Any] | None = None) -> str:
    """A Mermaid flowchart of the definition: solid arrows for Next, dotted ones for Catch."""
    asl = definition if definition is not None else json.loads(ASL_PATH.read_text())
    lines = ["flowchart TD", f"    start((start)) --> {asl['StartAt']}"]
    _edges(asl["States"], "", lines)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(mermaid(), end="")
