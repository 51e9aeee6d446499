"""docs/workflow.md shows the state machine as the ASL defines it (no drift), and the ASL's targets exist."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlinf_aws.asl_diagram import ASL_PATH, mermaid

DOC = Path(__file__).resolve().parents[3] / "docs" / "workflow.md"


def test_the_workflow_doc_holds_the_current_diagram() -> None:
    assert mermaid() in DOC.read_text(), "regenerate the diagram: python -m rlinf_aws.asl_diagram"


def _targets(states: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name, state in states.items():
        out.append((name, states))
        if state["Type"] == "Map":
            out += _targets(state["ItemProcessor"]["States"])
        for branch in state.get("Branches", []):
            out += _targets(branch["States"])
    return out


def test_every_next_and_catch_target_exists_in_its_scope_and_no_indexed_paths() -> None:
    text = ASL_PATH.read_text()
    asl = json.loads(text)
    for name, scope in _targets(asl["States"]):
        state = scope[name]
        for target in [state.get("Next")] + [c["Next"] for c in state.get("Catch", [])]:
            assert target is None or target in scope, f"{name} -> {target}"
    assert "[0]" not in text and "JSONata" not in text
