"""The demo checkpoint is a real RLinf FSDP layout the rest of the system can recognise."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import torch
import torch.distributed.checkpoint as dcp

from eval_runner.demo_checkpoint import main, write_demo_checkpoint
from eval_runner.policies.demo_mlp import expected_shapes
from rlinf_bench.checkpoints.layouts import LAYOUTS, detect_layout, find_weights
from rlinf_bench.contracts.checkpoint import CheckpointLayout, CheckpointRef
from rlinf_bench.errors import CheckpointError


def test_given_root_then_checkpoint_lands_where_rlinf_puts_step_n(tmp_path: Path) -> None:
    ref = write_demo_checkpoint(tmp_path, experiment="libero_ppo", global_step=300, seed=2)
    root = tmp_path / "libero_ppo" / "checkpoints" / "global_step_300"
    assert ref == CheckpointRef(
        uri=str(root.resolve()), experiment="libero_ppo", global_step=300, layout=CheckpointLayout.FSDP_DCP
    )
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == [
        "actor/dcp_checkpoint/.metadata",
        "actor/dcp_checkpoint/__0_0.distcp",
        "actor/model_state_dict/full_weights.pt",
    ]
    assert detect_layout(root) is CheckpointLayout.FSDP_DCP
    assert find_weights(root) == root / LAYOUTS[CheckpointLayout.FSDP_DCP].last_file


def test_given_checkpoint_then_full_weights_is_written_last(tmp_path: Path) -> None:
    root = Path(write_demo_checkpoint(tmp_path).uri)
    last = (root / "actor/model_state_dict/full_weights.pt").stat().st_mtime_ns
    assert all(p.stat().st_mtime_ns <= last for p in (root / "actor/dcp_checkpoint").iterdir())


def test_given_dcp_shard_then_torch_dcp_reads_back_the_same_model(tmp_path: Path) -> None:
    root = Path(write_demo_checkpoint(tmp_path, global_step=42, seed=5).uri)
    full = torch.load(root / "actor/model_state_dict/full_weights.pt", weights_only=True)
    assert {k: tuple(v.shape) for k, v in full.items()} == expected_shapes(32)
    template = {"model": {k: torch.zeros_like(v) for k, v in full.items()}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dcp.load(template, checkpoint_id=str(root / "actor/dcp_checkpoint"))
    for key, value in full.items():
        assert torch.equal(template["model"][key], value), key


def test_given_two_seeds_then_parameters_differ_and_same_seed_repeats(tmp_path: Path) -> None:
    def weights(experiment: str, seed: int) -> dict[str, torch.Tensor]:
        root = Path(write_demo_checkpoint(tmp_path, experiment=experiment, seed=seed).uri)
        return torch.load(root / "actor/model_state_dict/full_weights.pt", weights_only=True)

    a, b, c = weights("a", 0), weights("b", 0), weights("c", 1)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["net.0.weight"], c["net.0.weight"])


def test_given_negative_step_then_error(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="global_step=-1"):
        write_demo_checkpoint(tmp_path, global_step=-1)


def test_given_module_cli_then_it_prints_the_checkpoint_ref(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--experiment", "x", "--step", "7"]) == 0
    ref = CheckpointRef.from_json(capsys.readouterr().out)
    assert ref.global_step == 7 and Path(ref.uri).name == "global_step_7"
    assert json.loads(ref.to_json())["layout"] == "fsdp_dcp"
