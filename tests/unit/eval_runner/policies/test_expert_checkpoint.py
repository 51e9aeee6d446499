"""Demo checkpoints that carry the scripted expert's settings, read by builtin:expert?settings=checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from eval_runner.demo_checkpoint import main, write_demo_checkpoint
from eval_runner.expert_checkpoint import SETTINGS_FILE, ExpertSettings
from eval_runner.policies.expert import LABEL, ExpertPolicy
from eval_runner.policies.factory import load_policy
from rlinf_bench.checkpoints.layouts import detect_layout
from rlinf_bench.contracts.checkpoint import CheckpointLayout
from rlinf_bench.errors import CheckpointError, PolicyError

SPEC = "builtin:expert?settings=checkpoint"


def _expert_checkpoint(tmp_path: Path, step: int, noise: float) -> Path:
    ref = write_demo_checkpoint(tmp_path, global_step=step, expert=ExpertSettings(noise=noise))
    return Path(ref.uri)


def test_given_two_noise_levels_then_each_checkpoint_plays_the_expert_at_its_own(tmp_path: Path) -> None:
    noisy, clean = _expert_checkpoint(tmp_path, 100, 1.5), _expert_checkpoint(tmp_path, 200, 0.0)
    a, b = load_policy(SPEC, noisy), load_policy(SPEC, clean)
    assert isinstance(a, ExpertPolicy) and isinstance(b, ExpertPolicy)
    assert (a.noise, b.noise) == (1.5, 0.0)
    da, db = a.describe(), b.describe()
    assert da["kind"] == LABEL and "not a learned policy" in da["kind"]
    # provenance tells the two checkpoints apart, as it does for learned weights
    assert da["weights_sha256"] and da["weights_sha256"] != db["weights_sha256"]


def test_given_expert_checkpoint_then_it_is_a_real_fsdp_layout_holding_no_learned_weights(tmp_path: Path) -> None:
    root = _expert_checkpoint(tmp_path, 100, 1.5)
    assert detect_layout(root) is CheckpointLayout.FSDP_DCP
    weights = torch.load(root / "actor/model_state_dict/full_weights.pt", weights_only=True)
    assert {k: float(v) for k, v in weights.items()} == {"noise": 1.5, "hesitate": 0.0, "seed": 0.0}
    doc = json.loads((root / SETTINGS_FILE).read_text())
    assert doc["noise"] == 1.5 and "not a learned policy" in doc["kind"]
    # written before full_weights.pt, whose arrival is what the completeness check waits for
    assert (root / SETTINGS_FILE).stat().st_mtime_ns <= (
        root / "actor/model_state_dict/full_weights.pt"
    ).stat().st_mtime_ns


def test_given_command_line_then_expert_noise_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--step", "200", "--expert-noise", "0.5"]) == 0
    root = tmp_path / "demo/checkpoints/global_step_200"
    policy = load_policy(SPEC, root)
    assert isinstance(policy, ExpertPolicy) and policy.noise == 0.5


def test_given_checkpoint_without_settings_then_the_error_names_the_file_and_the_fix(tmp_path: Path) -> None:
    root = Path(write_demo_checkpoint(tmp_path).uri)  # random demo weights, no expert settings
    with pytest.raises(CheckpointError, match=r"expert_settings\.json") as err:
        load_policy(SPEC, root)
    assert "builtin:expert?noise=" in str(err.value)


def test_given_tampered_settings_then_refused_naming_the_field(tmp_path: Path) -> None:
    root = _expert_checkpoint(tmp_path, 100, 1.5)
    (root / SETTINGS_FILE).write_text(json.dumps({"noise": 99, "shell": "rm -rf /"}))
    with pytest.raises(CheckpointError) as err:
        load_policy(SPEC, root)
    assert "noise" in str(err.value) and "shell" in str(err.value) and SETTINGS_FILE in str(err.value)


@pytest.mark.parametrize(
    ("spec", "named"),
    [("builtin:expert?settings=checkpoint&noise=0.5", "noise"), ("builtin:expert?settings=weights", "settings")],
)
def test_given_conflicting_or_unknown_settings_source_then_refused(tmp_path: Path, spec: str, named: str) -> None:
    root = _expert_checkpoint(tmp_path, 100, 1.5)
    with pytest.raises(PolicyError, match=named):
        load_policy(spec, root)


def test_given_no_checkpoint_then_settings_from_checkpoint_is_refused() -> None:
    with pytest.raises(CheckpointError, match="--checkpoint"):
        load_policy(SPEC, None)
