"""Bad input to an ``rlinf:`` evaluation exits 2 with a message naming the input (the real command, no stepping).

Each case stops while the policy loads, before any worker starts, and leaves a failed result file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("rlinf", reason="rlinf lives in .venv-rlinf (its antlr4 pin breaks moto here): make test-rlinf")

from eval_runner.cli import main
from tests import rlinf_fixtures as F


def _fails(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, dict]:  # type: ignore[type-arg]
    out = tmp_path / "r.json"
    rc = main([*argv, "--suite", "libero_spatial", "--tasks", "0", "--trials", "1", "--out", str(out), "--no-progress"])
    assert rc == 2
    result = json.loads(out.read_text())
    assert result["status"] == "failed"
    return capsys.readouterr().err, result


def test_given_a_checkpoint_with_one_key_removed_then_exit_2_naming_the_key_and_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    step = F.write_checkpoint(tmp_path / "exp", F.build(F.mlp_section()), drop="backbone.2.weight")
    config = F.write_run_config(tmp_path / "config.yaml", F.mlp_section())
    err, result = _fails(tmp_path, capsys, "--policy", f"rlinf:{config}", "--checkpoint", str(step))
    assert "missing keys backbone.2.weight" in err
    assert str(step / "actor" / "model_state_dict" / "full_weights.pt") in err
    assert "CheckpointError" in result["error"]


def test_given_a_weights_file_that_does_not_exist_then_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = F.write_run_config(tmp_path / "config.yaml", F.mlp_section())
    missing = tmp_path / "nowhere" / "full_weights.pt"
    err, _ = _fails(tmp_path, capsys, "--policy", f"rlinf:{config}?weights={missing}")
    assert f"weights file {missing} does not exist" in err


def test_given_a_checkpoint_folder_without_rlinf_weights_then_exit_2_naming_the_expected_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    step = tmp_path / "exp" / "checkpoints" / "global_step_5"
    (step / "actor" / "dcp_checkpoint").mkdir(parents=True)  # the sharded files only, no full_weights.pt
    (step / "actor" / "dcp_checkpoint" / ".metadata").write_bytes(b"x")
    config = F.write_run_config(tmp_path / "config.yaml", F.mlp_section())
    err, _ = _fails(tmp_path, capsys, "--policy", f"rlinf:{config}", "--checkpoint", str(step))
    assert str(step) in err and "actor/model_state_dict/full_weights.pt" in err


def test_given_a_config_rlinf_cannot_build_then_exit_2_with_rlinfs_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = F.write_run_config(tmp_path / "config.yaml", F.mlp_section(obs_dim=None))
    err, _ = _fails(tmp_path, capsys, "--policy", f"rlinf:{config}")
    assert str(config) in err and "rlinf could not build model_type 'mlp_policy'" in err


def test_given_a_device_that_is_not_there_then_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = F.write_run_config(tmp_path / "config.yaml", F.mlp_section())
    err, _ = _fails(tmp_path, capsys, "--policy", f"rlinf:{config}?device=cuda:3")
    assert "device='cuda:3' is not there" in err
