"""The same budget flags on every command that starts evaluations: ``--runs/--trials/--max-steps/--videos`` on
``pipeline`` and ``watch`` override the eval matrix (of ``--config`` or the small default), as on ``demo``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rlinf_bench.intake.config import parse_config_text
from rlinf_cli.main import main
from rlinf_local.pipeline_command import PipelineOutcome
from rlinf_local.runs import config_text_for

BUDGET = ["--runs", "2", "--trials", "4", "--max-steps", "30", "--videos", "0"]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What pipeline/watch/demo were asked to run, the stack replaced by a recorder."""
    seen: list[dict[str, Any]] = []

    def record(*args: Any, **kw: Any) -> PipelineOutcome:
        seen.append(kw)
        return PipelineOutcome()

    monkeypatch.setattr("rlinf_local.runs.run_pipeline", record)
    monkeypatch.setattr("rlinf_local.watch.watch", record)
    monkeypatch.setattr("rlinf_local.demo_command.run_demo", record)
    return seen


@pytest.mark.parametrize("command", [["pipeline", "ckpt/global_step_1"], ["watch", "."], ["demo"]])
def test_given_the_budget_flags_then_every_command_passes_the_same_budget(
    command: list[str], calls: list[dict[str, Any]], tmp_path: Path
) -> None:
    main([*command, *BUDGET, "--out", str(tmp_path)])

    assert calls[0]["budget"] == {"runs": 2, "trials": 4, "max_steps": 30, "videos": 0}


@pytest.mark.parametrize("command", [["pipeline", "ckpt/global_step_1"], ["watch", "."]])
def test_given_no_budget_flags_then_the_config_decides(
    command: list[str], calls: list[dict[str, Any]], tmp_path: Path
) -> None:
    main([*command, "--out", str(tmp_path)])

    assert calls[0]["budget"] == {}


def test_given_a_config_and_budget_flags_then_the_flags_override_its_matrix_and_keep_the_rest(tmp_path: Path) -> None:
    config = tmp_path / "intake.yaml"
    config.write_text("suites: [libero_goal, {name: libero_10, tasks: [0, 1]}]\nruns: 3\npolicy: builtin:zero\n")

    text = config_text_for(config, tmp_path, {"runs": 1, "trials": 5, "max_steps": 40, "videos": 0})

    matrix = parse_config_text(text, source="test")
    assert (matrix.runs, matrix.trials_per_task, matrix.policy, matrix.videos) == (1, 5, "builtin:zero", 0)
    assert [(s.name, s.tasks, s.max_steps) for s in matrix.suites] == [
        ("libero_goal", None, 40),
        ("libero_10", [0, 1], 40),
    ]


def test_given_budget_flags_without_a_config_then_the_small_default_takes_them(tmp_path: Path) -> None:
    matrix = parse_config_text(config_text_for(None, tmp_path, {"trials": 2, "max_steps": 7}), source="test")

    assert (matrix.runs, matrix.trials_per_task, matrix.suites[0].max_steps) == (3, 2, 7)
    assert parse_config_text(config_text_for(None, tmp_path, {"videos": 5}), source="test").videos == 5


def test_given_a_budget_the_suite_cannot_hold_then_exit_2_naming_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "intake.yaml"
    config.write_text("suites: [libero_goal]\n")

    with pytest.raises(Exception, match="--trials 99"):
        config_text_for(config, tmp_path, {"trials": 99})
    assert main(["pipeline", "ckpt/global_step_1", "--runs", "0", "--out", str(tmp_path)]) == 2
    assert "--runs must be >= 1, got 0" in capsys.readouterr().err
    assert main(["demo", "--videos", "-1", "--out", str(tmp_path)]) == 2
    assert "--videos must be >= 0, got -1" in capsys.readouterr().err
    with pytest.raises(Exception, match="--videos 101"):  # the matrix's own limit, named with the flag
        config_text_for(config, tmp_path, {"videos": 101})
