"""bench/gpu_suites.py: suite-runs folded in with their card and lease, the per-checkpoint sum, the early ending."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import gpu_suites


def _lease_file(
    tmp_path: Path, suite: str, wall_s: float, *, status: str = "complete", gpu: str = "NVIDIA H100"
) -> Path:
    doc = {
        "suite": suite,
        "max_steps": 300,
        "machine": {"cores": 16, "gpus": [f"{gpu}, 580.159.04, 81559 MiB"]},
        "suite_7b": {
            "status": status,
            "wall_s": wall_s,
            "episodes": 500,
            "env_steps": 150_000,
            "command": "rlinf-bench evaluate --suite x --workers 30 --policy server:ws://h",
            "server": {"model_busy": 0.97},
            "gpu": {"mean_sm_active_pct": 62.7},
            "error": None if status == "complete" else "timed out",
        },
    }
    path = tmp_path / f"suite_{suite}_{wall_s}.json"
    path.write_text(json.dumps(doc))
    return path


def test_runs_keep_their_card_and_lease_and_settings_that_differ_are_listed(tmp_path: Path) -> None:
    doc: dict = {"suites": {}}
    gpu_suites.add_runs(doc, [_lease_file(tmp_path, "libero_goal", 327.4)], "lease A")
    gpu_suites.add_runs(doc, [_lease_file(tmp_path, "libero_goal", 320.0, gpu="NVIDIA H200")], "lease B")
    goal = doc["suites"]["libero_goal"]
    assert goal["wall_s"] == [327.4, 320.0]
    assert goal["workers"] == 30 and goal["episodes"] == 500 and goal["max_steps"] == 300
    # two cards, two leases: both named, never one of them passed off as the suite's
    assert goal["card"] == ["NVIDIA H100", "NVIDIA H200"]
    assert goal["lease"] == ["lease A", "lease B"]
    # LIBERO-Spatial comes from the earlier H200 pair when no lease file adds it
    assert doc["suites"]["libero_spatial"]["wall_s"] == [265.0, 234.0]


def test_a_run_that_did_not_complete_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="did not complete"):
        gpu_suites.add_runs({"suites": {}}, [_lease_file(tmp_path, "libero_10", 600.0, status="timeout")], "A")


def test_per_checkpoint_sums_three_runs_and_names_missing_suites_and_mixed_cards() -> None:
    suites = {
        "libero_spatial": {"wall_s": [265.0, 234.0], "card": "NVIDIA H200"},
        "libero_goal": {"wall_s": [327.4], "card": "NVIDIA H100"},
    }
    pc = gpu_suites.per_checkpoint(suites)
    assert pc["gpu_s"] == pytest.approx([3 * (234.0 + 327.4), 3 * (265.0 + 327.4)])
    assert pc["missing_suites"] == ["libero_object", "libero_10"]
    assert pc["mixed_cards"] is True


def test_early_ending_counts_failures_at_the_horizon() -> None:
    levels = gpu_suites.early_ending()["levels"]
    expert = json.loads(gpu_suites.EXPERT.read_text())["suites"]["libero_spatial"]["levels"][0]
    steps = sum(
        t["successes"] * t["mean_steps_success"] + (t["episodes"] - t["successes"]) * expert["max_steps"]
        for t in expert["per_task"].values()
    )
    assert levels[0]["mean_steps"] == round(steps / expert["episodes"], 1)
    # the more the expert succeeds, the shorter its episodes
    assert [lv["of_horizon"] for lv in levels] == sorted(lv["of_horizon"] for lv in levels)


def test_the_tracked_file_measures_every_protocol_suite() -> None:
    doc = json.loads(gpu_suites.RESULTS.read_text())
    for suite in gpu_suites.PROTOCOL_SUITES:
        entry = doc["suites"][suite]
        assert entry["wall_s"] and entry["card"] and entry["lease"], suite
    assert doc["per_checkpoint"]["missing_suites"] == []
