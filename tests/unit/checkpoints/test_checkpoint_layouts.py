"""One rule tells a checkpoint's layout from the names of its files, for S3 listings and local folders alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlinf_bench.checkpoints.layouts import (
    LAYOUTS,
    detect_layout,
    find_weights,
    layout_of_names,
    matches,
    needed_names,
    weights_name,
)
from rlinf_bench.contracts.checkpoint import CheckpointLayout
from rlinf_bench.errors import CheckpointError

CASES = [
    (["actor/dcp_checkpoint/.metadata", "actor/dcp_checkpoint/__0_0.distcp"], CheckpointLayout.FSDP_DCP),
    (["actor/model_state_dict/full_weights.pt"], CheckpointLayout.FSDP_DCP),
    (["actor/latest_checkpointed_iteration.txt"], CheckpointLayout.MEGATRON),
    (["actor/iter_0000100/mp_rank_00/model_optim_rng.pt"], CheckpointLayout.MEGATRON),  # before the iteration file
    (["actor/.metadata", "actor/model/model.safetensors"], CheckpointLayout.V01),
    (["actor/model.pt"], CheckpointLayout.LEGACY_PT),
    (["actor/optim.pt"], CheckpointLayout.LEGACY_PT),  # the last file of the legacy layout, before model.pt shows
]


@pytest.mark.parametrize(("names", "layout"), CASES)
def test_given_the_files_of_a_layout_then_names_and_a_local_folder_tell_the_same_layout(
    names: list[str], layout: CheckpointLayout, tmp_path: Path
) -> None:
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x")

    assert layout_of_names(names) is layout
    assert detect_layout(tmp_path) is layout


def test_given_no_layouts_files_then_none_from_names_and_an_error_naming_the_files_for_a_folder(tmp_path: Path) -> None:
    assert layout_of_names(["actor/notes.txt"]) is None
    (tmp_path / "actor").mkdir()
    (tmp_path / "actor" / "notes.txt").write_text("x")
    with pytest.raises(CheckpointError, match=r"unrecognised RLinf checkpoint layout \(files: \['notes.txt'\]\)"):
        detect_layout(tmp_path)
    with pytest.raises(CheckpointError, match="has no actor/ directory"):
        detect_layout(tmp_path / "actor")


def test_given_a_layout_then_its_weights_and_the_files_a_policy_loads_are_picked_from_the_names() -> None:
    names = ["actor/.metadata", "actor/__0_0.distcp", "actor/model/config.json", "actor/model/shard-2.safetensors"]

    assert weights_name(names, CheckpointLayout.V01) == "actor/model/shard-2.safetensors"  # the second pattern
    assert weights_name([*names, "actor/model/model.safetensors"], CheckpointLayout.V01) == (
        "actor/model/model.safetensors"  # the first pattern wins
    )
    assert needed_names(names, CheckpointLayout.V01) == ["actor/model/config.json", "actor/model/shard-2.safetensors"]
    assert weights_name(names, CheckpointLayout.FSDP_DCP) is None


def test_given_a_local_checkpoint_without_its_weights_then_find_weights_names_the_layout_and_what_it_looked_for(
    tmp_path: Path,
) -> None:
    (tmp_path / "actor" / "dcp_checkpoint").mkdir(parents=True)
    (tmp_path / "actor" / "dcp_checkpoint" / ".metadata").write_text("x")
    with pytest.raises(CheckpointError, match=r"no weights file for layout fsdp_dcp .*incomplete"):
        find_weights(tmp_path)
    weights = tmp_path / LAYOUTS[CheckpointLayout.FSDP_DCP].last_file
    weights.parent.mkdir(parents=True)
    weights.write_bytes(b"w")
    assert find_weights(tmp_path) == weights


def test_a_star_never_crosses_a_slash() -> None:
    assert matches("actor/model/a.safetensors", "actor/model/*")
    assert not matches("actor/model/sub/a.safetensors", "actor/model/*")
