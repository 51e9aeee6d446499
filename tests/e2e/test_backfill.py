"""The brief's scheduled loop on one machine: ``rlinf-bench backfill ROOT --steps ... --out DIR``.

GIVEN a run with steps 25 and 50 saved, WHEN a user backfills steps 25, 50 and 75 with no deployed stack, THEN
both checkpoints are evaluated through the embedded default and step 75 is named as not found; WHEN they
backfill again, THEN both are skipped as already evaluated, naming the executions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import copy_checkpoint, rlinf_bench

pytestmark = [pytest.mark.sim, pytest.mark.slow]


def test_given_the_briefs_steps_then_backfill_evaluates_those_that_exist_once(
    demo_checkpoint: Path, tiny_config: Path, tmp_path: Path
) -> None:
    root, out = tmp_path / "runs", tmp_path / "out"
    for step in (25, 50):
        copy_checkpoint(demo_checkpoint, root, step=step)
    common = ["--out", str(out), "--config", str(tiny_config), "--json"]

    first = rlinf_bench("backfill", str(root), "--steps", "25,50,75", *common, timeout=1800)

    assert first.returncode == 0, first.stderr[-3000:]
    rows = first.json()
    assert [(r["global_step"], r["status"]) for r in rows] == [(25, "started"), (50, "started"), (75, "not_found")]
    assert all("SUCCEEDED" in r["detail"] for r in rows[:2])
    again = rlinf_bench("backfill", str(root), "--steps", "25,50,75", *common, "--dry-run")
    assert again.returncode == 0, again.stderr[-3000:]
    skipped = again.json()
    assert [r["status"] for r in skipped] == ["already_evaluated", "already_evaluated", "not_found"]
    assert rows[0]["detail"].split()[2] in skipped[0]["detail"]  # the execution that evaluated it
