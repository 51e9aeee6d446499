"""The ASL check in `make check-deploy` (deploy/tools/asl_targets.py): every transition lands on a state."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]

_spec = importlib.util.spec_from_file_location("asl_targets", REPO / "deploy" / "tools" / "asl_targets.py")
assert _spec and _spec.loader
asl_targets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(asl_targets)

ASL = REPO / "statemachine" / "evaluate_checkpoint.asl.json"

MINIMAL: dict[str, Any] = {
    "StartAt": "Plan",
    "States": {
        "Plan": {"Type": "Task", "Resource": "${RequestPlannerFunctionArn}", "Next": "Runs"},
        "Runs": {
            "Type": "Map",
            "ItemsPath": "$.items",
            "ItemProcessor": {"StartAt": "Submit", "States": {"Submit": {"Type": "Pass", "End": True}}},
            "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Failed"}],
            "Next": "Done",
        },
        "Done": {"Type": "Succeed"},
        "Failed": {"Type": "Fail"},
    },
}


def test_given_the_workflow_asl_then_every_transition_lands_on_a_state() -> None:
    assert asl_targets.check_file(ASL) == []
    assert asl_targets.main([str(ASL)]) == 0


def test_given_a_sound_machine_then_nothing_is_reported() -> None:
    assert asl_targets.check_scope(MINIMAL) == []


@pytest.mark.parametrize(
    ("break_it", "expected"),
    [
        (lambda m: m["States"]["Plan"].update(Next="Run"), "States.Plan.Next -> 'Run' is not a state here"),
        (lambda m: m["States"]["Runs"]["Catch"][0].update(Next="Fail"), "States.Runs.Catch[0].Next -> 'Fail'"),
        (lambda m: m.update(StartAt="plan"), "StartAt -> 'plan'"),
        (
            # A Map's items run in a scope of their own: a state of the outer machine is not a target there.
            lambda m: m["States"]["Runs"]["ItemProcessor"]["States"]["Submit"].update(End=False, Next="Done"),
            "States.Runs.ItemProcessor.States.Submit.Next -> 'Done'",
        ),
        (lambda m: m["States"]["Done"].update(Type="Pass"), "States.Done: neither End nor Next"),
        (lambda m: m["States"].update(Orphan={"Type": "Succeed"}), "States.Orphan: unreachable"),
        (lambda m: m.update(QueryLanguage="JSONata"), "JSONPath only"),
        (lambda m: m["States"]["Runs"].update(ItemsPath="$.items[0].runs"), "indexed path '$.items[0].runs'"),
    ],
)
def test_given_a_broken_machine_then_the_problem_is_named(tmp_path: Path, break_it: Any, expected: str) -> None:
    machine = copy.deepcopy(MINIMAL)
    break_it(machine)
    path = tmp_path / "m.asl.json"
    path.write_text(json.dumps(machine))
    problems = asl_targets.check_file(path)
    assert any(expected in p for p in problems), problems
    assert asl_targets.main([str(path)]) == 1


def test_given_no_file_or_bad_json_then_the_file_is_named(tmp_path: Path) -> None:
    assert asl_targets.check_file(tmp_path / "missing.json") == [f"{tmp_path / 'missing.json'}: no such file"]
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert "not JSON" in asl_targets.check_file(bad)[0]
