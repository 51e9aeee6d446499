"""One CLI grammar: the checkpoint (or log root) comes first, positionally, on every command; the old
``--checkpoint`` spelling still works; two different values, or none, fail with a message naming both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eval_runner.cli import build_run
from rlinf_cli.main import build_parser, main
from rlinf_local.pipeline_command import PipelineOutcome
from tests.unit.rlinf_cli.local_checkpoints import write_local


@pytest.fixture
def pipeline_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """``pipeline`` and ``watch`` with the stack replaced by a recorder of what they were asked to do."""
    calls: list[dict[str, Any]] = []

    def fake_pipeline(checkpoints: list[str], **kw: Any) -> PipelineOutcome:
        calls.append({"checkpoints": checkpoints, **kw})
        return PipelineOutcome()

    def fake_watch(root: Path, **kw: Any) -> PipelineOutcome:
        calls.append({"root": root, **kw})
        return PipelineOutcome()

    monkeypatch.setattr("rlinf_local.runs.run_pipeline", fake_pipeline)
    monkeypatch.setattr("rlinf_local.watch.watch", fake_watch)
    return calls


@pytest.mark.parametrize("spelling", [["CKPT"], ["--checkpoint", "CKPT"], ["CKPT", "--checkpoint", "CKPT"]])
def test_given_pipeline_then_the_checkpoint_is_positional_and_the_old_option_is_an_alias(
    spelling: list[str], pipeline_calls: list[dict[str, Any]], tmp_path: Path
) -> None:
    argv = [tmp_path.as_posix() + "/ck" if a == "CKPT" else a for a in spelling]

    main(["pipeline", *argv, "--out", str(tmp_path / "out")])

    assert pipeline_calls[0]["checkpoints"] == [tmp_path.as_posix() + "/ck"]


def test_given_two_different_checkpoints_then_exit_2_naming_both(
    pipeline_calls: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["pipeline", "a/global_step_1", "--checkpoint", "b/global_step_2", "--out", str(tmp_path)])

    err = capsys.readouterr().err
    assert rc == 2 and not pipeline_calls
    assert "a/global_step_1" in err and "--checkpoint b/global_step_2" in err


def test_given_no_checkpoint_then_exit_2_naming_the_argument(
    pipeline_calls: list[dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["pipeline", "--out", str(tmp_path)])

    assert rc == 2 and not pipeline_calls
    assert "rlinf-bench pipeline CHECKPOINT (or --checkpoint CHECKPOINT)" in capsys.readouterr().err


@pytest.mark.parametrize("spelling", [["ROOT"], ["--root", "ROOT"]])
def test_given_watch_then_root_is_positional_or_root_option(
    spelling: list[str], pipeline_calls: list[dict[str, Any]], tmp_path: Path
) -> None:
    argv = [str(tmp_path) if a == "ROOT" else a for a in spelling]

    main(["watch", *argv, "--out", str(tmp_path / "out")])

    assert pipeline_calls[0]["root"] == tmp_path


@pytest.mark.parametrize("option", [[], ["--checkpoint"]])
def test_given_trigger_then_the_checkpoint_is_positional_or_the_option(
    option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ckpt = write_local(tmp_path, 25)

    assert main(["trigger", *option, str(ckpt), "--dry-run", "--quiet-period", "0"]) == 0

    assert json.loads(capsys.readouterr().out)["checkpoint"]["global_step"] == 25


@pytest.mark.parametrize("option", [[], ["--checkpoint"]])
def test_given_evaluate_then_the_checkpoint_is_positional_or_the_option(option: list[str]) -> None:
    args = build_parser().parse_args(["evaluate", *option, "/data/grpo/checkpoints/global_step_400"])

    run = build_run(args)

    assert (run.checkpoint.experiment, run.checkpoint.global_step) == ("grpo", 400)


@pytest.mark.parametrize("command", ["pipeline", "trigger", "evaluate", "watch"])
def test_given_help_then_usage_shows_the_positional_first(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])

    usage = capsys.readouterr().out.split("\n\n")[0]
    target = "ROOT" if command == "watch" else "CHECKPOINT"
    assert f"[{target}]" in usage and f"--{target.lower()} {target}" in usage


def test_given_two_different_checkpoints_to_the_eval_job_then_exit_2_naming_both(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from eval_runner.cli import main as eval_main

    rc = eval_main(["a/global_step_1", "--checkpoint", "b/global_step_2", "--suite", "libero_spatial"])

    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("eval_runner: error: two CHECKPOINTs given")
    assert "Traceback" not in err
