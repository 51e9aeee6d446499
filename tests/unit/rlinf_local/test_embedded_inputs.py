"""What the embedded default accepts as a checkpoint, and what it says about anything else."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlinf_bench.errors import CheckpointError
from rlinf_local.inputs import local_checkpoint, with_user_paths


def fsdp(root: Path) -> Path:
    ckpt = root / "exp" / "checkpoints" / "global_step_7"
    (ckpt / "actor" / "dcp_checkpoint").mkdir(parents=True)
    (ckpt / "actor" / "model_state_dict").mkdir()
    (ckpt / "actor" / "dcp_checkpoint" / ".metadata").write_bytes(b"m")
    (ckpt / "actor" / "dcp_checkpoint" / "__0_0.distcp").write_bytes(b"d")
    (ckpt / "actor" / "model_state_dict" / "full_weights.pt").write_bytes(b"w")
    return ckpt


def test_an_fsdp_checkpoint_is_read_with_its_experiment_step_and_last_file_last(tmp_path: Path) -> None:
    ckpt = local_checkpoint(f"file://{fsdp(tmp_path)}")
    assert (ckpt.experiment, ckpt.global_step, ckpt.layout.value) == ("exp", 7, "fsdp_dcp")
    assert ckpt.key_prefix == "exp/checkpoints/global_step_7"
    assert ckpt.files()[-1].name == "full_weights.pt" and len(ckpt.files()) == 3


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("s3://bucket/exp/checkpoints/global_step_1", "rlinf-bench trigger"),
        ("{tmp}/nowhere", "does not exist"),
        ("{tmp}/exp/checkpoints/global_step_7/actor/model_state_dict/full_weights.pt", "is a file"),
    ],
)
def test_bad_paths_are_refused_naming_the_path_and_the_layouts(tmp_path: Path, given: str, says: str) -> None:
    fsdp(tmp_path)
    path = given.format(tmp=tmp_path)
    with pytest.raises(CheckpointError) as err:
        local_checkpoint(path)
    assert path in str(err.value) and says in str(err.value)
    assert "megatron" in str(err.value) and "actor/model/*.safetensors" in str(err.value)


def test_a_checkpoint_outside_the_rlinf_folder_layout_is_refused(tmp_path: Path) -> None:
    ckpt = fsdp(tmp_path)
    moved = tmp_path / "loose"
    ckpt.rename(moved)
    with pytest.raises(CheckpointError, match="checkpoints/global_step_<N>"):
        local_checkpoint(str(moved))


def test_given_a_jobs_failure_then_it_names_the_users_folder_not_the_bucket_or_the_jobs_cache() -> None:
    copies = {
        "rlinf-checkpoints/demo/checkpoints/global_step_20": Path("/home/me/runs/demo/checkpoints/global_step_20")
    }
    reason = (
        "CheckpointError: /root/.cache/rlinf-bench/checkpoints/rlinf-checkpoints/demo/checkpoints/global_step_20/actor/"
        "model_state_dict/full_weights.pt is truncated; checkpoint s3://rlinf-checkpoints/demo/checkpoints/global_step_20 "
        "(and s3://rlinf-checkpoints/demo/checkpoints/global_step_200 is another one)"
    )

    text = with_user_paths(reason, copies)

    assert text == (
        "CheckpointError: /home/me/runs/demo/checkpoints/global_step_20/actor/model_state_dict/full_weights.pt is "
        "truncated; checkpoint /home/me/runs/demo/checkpoints/global_step_20 "
        "(and s3://rlinf-checkpoints/demo/checkpoints/global_step_200 is another one)"
    )


@pytest.mark.parametrize("step", ["²", "٣", "1" * 13])
def test_a_step_folder_that_is_no_step_number_is_refused_with_our_message(tmp_path: Path, step: str) -> None:
    ckpt = fsdp(tmp_path)
    odd = ckpt.with_name(f"global_step_{step}")
    ckpt.rename(odd)
    with pytest.raises(CheckpointError, match="checkpoints/global_step_<N>"):
        local_checkpoint(str(odd))
