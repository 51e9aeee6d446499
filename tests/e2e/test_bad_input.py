"""Bad checkpoint input is refused before anything starts: exit 2, the path and the accepted layouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import rlinf_bench


@pytest.mark.parametrize("make", ["missing", "not_rlinf"])
def test_a_path_that_is_not_an_rlinf_checkpoint_exits_2_naming_it_and_the_layouts(make: str, tmp_path: Path) -> None:
    path = tmp_path / "exp" / "checkpoints" / "global_step_5"
    if make == "not_rlinf":
        (path / "weights").mkdir(parents=True)
        (path / "weights" / "model.bin").write_bytes(b"x")
    cli = rlinf_bench("pipeline", "--checkpoint", str(path), "--out", str(tmp_path / "out"))
    assert cli.returncode == 2
    assert str(path) in cli.stderr
    for layout in ("fsdp_dcp", "v01", "legacy_pt", "megatron"):
        assert layout in cli.stderr
    assert "actor/model_state_dict/full_weights.pt" in cli.stderr
    assert not (tmp_path / "out").exists()
