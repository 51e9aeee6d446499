"""``--policy`` on pipeline, watch and demo: it reaches the eval matrix, the checkpoint's own files say which
policy evaluates it, and the fix an error prints is the user's command with that ``--policy``."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from rlinf_bench.checkpoints.named_policies import EXPERT_SETTINGS_FILE, named_policies, policy_advice
from rlinf_cli.main import main
from rlinf_local.pipeline_command import PipelineOutcome
from rlinf_local.policy_check import check_matrix_policy, command_with_policy, policy_of
from rlinf_local.runs import config_text_for

EXPERT = "builtin:expert?settings=checkpoint"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The embedded commands with their stack replaced by a recorder of what they were asked to do."""
    seen: list[dict[str, Any]] = []

    def record(*args: Any, **kw: Any) -> PipelineOutcome:
        seen.append(kw)
        return PipelineOutcome()

    for target in ("rlinf_local.runs.run_pipeline", "rlinf_local.watch.watch", "rlinf_local.demo_command.run_demo"):
        monkeypatch.setattr(target, record)
    return seen


@pytest.mark.parametrize(
    "argv",
    [["pipeline", "runs/e/checkpoints/global_step_1"], ["watch", "runs"], ["demo"]],
    ids=["pipeline", "watch", "demo"],
)
def test_given_policy_on_an_embedded_command_then_it_is_passed_with_the_users_command(
    argv: list[str], calls: list[dict[str, Any]], tmp_path: Path
) -> None:
    given = [*argv, "--out", str(tmp_path), "--policy", EXPERT]

    main(given)

    assert calls[0]["policy"] == EXPERT and list(calls[0]["argv"]) == given


def test_given_policy_then_the_eval_matrix_evaluates_it_over_the_config(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("suites: [libero_goal]\npolicy: builtin:zero\n")

    assert policy_of(config_text_for(config, tmp_path, None, "builtin:random")) == ("builtin:random", ["libero"])
    assert yaml.safe_load(config_text_for(None, tmp_path, None, EXPERT))["policy"] == EXPERT
    assert policy_of(config_text_for(config, tmp_path))[0] == "builtin:zero"  # no --policy: the config's


def test_given_suites_of_two_benchmarks_then_the_matrix_names_each_env_kind_once_from_the_catalogue(
    tmp_path: Path,
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("suites: [libero_goal, robotwin/lift_pot, robotwin_short, LIBERO-Long]\n")

    assert policy_of(config_text_for(config, tmp_path))[1] == ["libero", "robotwin"]


def test_given_a_liberoplus_suite_then_its_policy_is_checked_as_its_env_kind_checks_it(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("suites: [liberoplus_spatial]\npolicy: builtin:zero\n")
    text = config_text_for(config, tmp_path)

    assert policy_of(text)[1] == ["liberoplus"]
    check_matrix_policy(text, [])  # the evaluator's policy check knows every env kind the catalogue names


def _checkpoint(root: Path, *, expert: bool = False, hydra: bool = False) -> Path:
    ckpt = root / "exp" / "checkpoints" / "global_step_7"
    (ckpt / "actor" / "model_state_dict").mkdir(parents=True)
    if expert:
        (ckpt / EXPERT_SETTINGS_FILE).write_text("{}")
    if hydra:
        (root / "exp" / ".hydra").mkdir()
        (root / "exp" / ".hydra" / "config.yaml").write_text("actor: {}\n")
    return ckpt


def test_given_a_demo_checkpoint_then_its_files_name_the_expert_and_the_command_that_evaluates_it(
    tmp_path: Path,
) -> None:
    ckpt = _checkpoint(tmp_path, expert=True)
    command = command_with_policy(["pipeline", str(ckpt), "--policy", "builtin:demo", "--out", "X"])

    advice = policy_advice(ckpt, command)

    assert [n.spec for n in named_policies(ckpt)] == [EXPERT] and str(ckpt / EXPERT_SETTINGS_FILE) in advice
    run = advice.split("run: ", 1)[1]
    assert shlex.split(run) == ["rlinf-bench", "pipeline", str(ckpt), "--out", "X", "--policy", EXPERT]


def test_given_an_rlinf_run_then_its_hydra_config_names_the_rlinf_policy(tmp_path: Path) -> None:
    ckpt = _checkpoint(tmp_path, hydra=True)

    (named,) = named_policies(ckpt)

    assert named.spec == f"rlinf:{tmp_path / 'exp' / '.hydra' / 'config.yaml'}" and "model_path" in named.what


def test_given_a_checkpoint_that_names_no_policy_then_the_advice_lists_the_kinds(tmp_path: Path) -> None:
    advice = policy_advice(_checkpoint(tmp_path))

    assert "its files name no policy" in advice and "rlinf:CONFIG" in advice and "evaluate --help" in advice


def test_given_watch_then_the_policy_is_checked_on_the_newest_complete_checkpoint(tmp_path: Path) -> None:
    from rlinf_local.watch import newest_checkpoint
    from tests.unit.rlinf_local.test_backfill_local import write_step

    write_step(tmp_path, 25)
    write_step(tmp_path, 50, complete=False)  # still being written: the router's rules decide about it later

    assert newest_checkpoint(tmp_path) == [(tmp_path / "exp" / "checkpoints" / "global_step_25").resolve()]
    assert newest_checkpoint(tmp_path / "empty-root") == []
