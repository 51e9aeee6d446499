"""Assembling one lease's side by side: our suite runs and vla-eval's, paired, refused when not the same work."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.gpu_peers import assemble


def _ours(wall_s: float, trials: int = 25) -> dict[str, Any]:
    gpu = {"mean_sm_active_pct": 40.0, "mean_tensor_active_pct": 10.0, "mean_util_pct": 90.0}
    return {
        "suite": "libero_spatial",
        "max_steps": 220,
        "settle_steps": 10,
        "cameras": 2,
        "resolution": 224,
        "machine": {"gpu": "H200"},
        "commands": ["python3 bench/eval_gpu.py --parts suite"],
        "suite_7b": {
            "status": "complete",
            "episodes": 10 * trials,
            "wall_s": wall_s,
            "gpu": gpu,
            "policy_calls": 100,
            "mean_batch": 8.0,
            "occupied_env_steps_per_s": 1.0,
            "steady_env_steps_per_s": 1.0,
            "server_start_s": 5.0,
            "mean_reset_s": 0.5,
            "command": "rlinf-bench evaluate --workers 15 --x",
            "server_command": "rlinf-bench serve-policy",
            "inflight": 8,
            "server_cpus": [15],
        },
    }


def _peer(wall_s: float, trials: int = 25, status: str = "complete") -> dict[str, Any]:
    return {
        "benchmark": "peer_vla_eval",
        "harness": {"name": "vla-eval", "version": "0.8.0"},
        "suite": "libero_spatial",
        "trials_per_task": trials,
        "max_steps": 220,
        "shards": 15,
        "server_cores": 1,
        "max_batch": 16,
        "max_wait_ms": 10.0,
        "command": "python3 bench/peer_vla_eval.py --trials 25",
        "run": {
            "status": status,
            "wall_s": wall_s,
            "episodes": 10 * trials,
            "successes": 0,
            "gpu": {"mean_sm_active_pct": 30.0},
            "policy_rows_per_s": 50.0,
            "server": {"mean_rows_per_forward": 6.0},
            "cpu_busy_pct": 90.0,
        },
    }


def _write(tmp_path: Path, name: str, doc: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_given_two_pairs_then_each_harness_keeps_both_values_and_the_ratio_is_taken_pair_by_pair(
    tmp_path: Path,
) -> None:
    ours = [_write(tmp_path, f"ours_{k}.json", _ours(w)) for k, w in enumerate((300.0, 320.0))]
    peers = [_write(tmp_path, f"vla_{k}.json", _peer(w)) for k, w in enumerate((400.0, 320.0))]

    doc = assemble(ours, "nvidia-h200, today", {}, None, [], peers)

    assert doc["rlinf_bench"]["wall_s"] == [300.0, 320.0]
    assert doc["vla_eval"]["wall_s"] == [400.0, 320.0]
    assert doc["vla_eval"]["ours_over_vla_eval_wall"] == [0.75, 1.0]
    assert doc["vla_eval"]["ours_over_vla_eval_episodes_per_h"] == [1.33, 1.0]
    assert doc["vla_eval"]["version"] == "0.8.0"


@pytest.mark.parametrize(
    ("peer", "message"),
    [
        (_peer(400.0, trials=5), "trials_per_task 5 differs"),
        (_peer(400.0, status="incomplete"), "'incomplete'"),
        ({"benchmark": "other"}, "not a bench/peer_vla_eval.py result"),
    ],
)
def test_given_a_peer_run_of_other_work_or_incomplete_then_it_is_refused_naming_the_file(
    tmp_path: Path, peer: dict[str, Any], message: str
) -> None:
    ours = [_write(tmp_path, f"ours_{k}.json", _ours(300.0)) for k in range(2)]
    peers = [_write(tmp_path, "vla_0.json", _peer(400.0)), _write(tmp_path, "vla_bad.json", peer)]

    with pytest.raises(SystemExit, match=message) as refused:
        assemble(ours, "lease", {}, None, [], peers)
    assert "vla_bad.json" in str(refused.value)


def test_given_one_peer_run_beside_two_of_ours_then_each_of_ours_is_set_against_it(tmp_path: Path) -> None:
    ours = [_write(tmp_path, f"ours_{k}.json", _ours(w)) for k, w in enumerate((250.0, 260.0))]

    doc = assemble(ours, "lease", {}, None, [], [_write(tmp_path, "vla_0.json", _peer(650.0))])

    assert doc["vla_eval"]["wall_s"] == [650.0]
    assert doc["vla_eval"]["ours_over_vla_eval_episodes_per_h"] == [2.6, 2.5]


def test_given_peer_runs_that_do_not_pair_with_ours_then_the_pairing_is_refused(tmp_path: Path) -> None:
    ours = [_write(tmp_path, f"ours_{k}.json", _ours(300.0)) for k in range(3)]
    peers = [_write(tmp_path, f"vla_{k}.json", _peer(400.0)) for k in range(2)]

    with pytest.raises(SystemExit, match="one per --suite-runs file"):
        assemble(ours, "lease", {}, None, [], peers)


def test_given_runs_of_part_of_the_suite_then_the_whole_suite_goals_are_not_judged(tmp_path: Path) -> None:
    ours = [_write(tmp_path, f"ours_{k}.json", _ours(48.0, trials=4)) for k in range(2)]

    doc = assemble(ours, "lease", {}, None, [])

    assert doc["goals_met"]["suite_wall_s_le_270"] is None and "whole suite" in doc["goals_met"]["note"]


def test_given_two_whole_suite_runs_then_each_goal_is_met_only_when_both_meet_it(tmp_path: Path) -> None:
    ours = [_write(tmp_path, f"ours_{k}.json", _ours(w, trials=50)) for k, w in enumerate((260.0, 280.0))]

    doc = assemble(ours, "lease", {}, None, [])

    assert doc["goals_met"] == {"suite_wall_s_le_270": False, "sm_activity_ge_75": False}


def test_given_a_previous_file_then_its_headline_moves_aside_and_earlier_sections_stay_where_they_were(
    tmp_path: Path,
) -> None:
    previous = {
        "benchmark": "gpu_peers",
        "lease": "old lease",
        "rlinf_bench": {"wall_s": [297.2, 298.4]},
        "vla_eval": {"version": "0.8.0", "wall_s": [252.3, 237.0], "episodes": [100, 100]},
        "harness_over_raw_15": [1.049, 1.004],
        "libero_10_end_to_end": {"wall_s": [175.2, 157.1]},
    }
    ours = [_write(tmp_path, f"o{i}.json", _ours(w, trials=50)) for i, w in enumerate((265.0, 234.0))]
    peer = [_write(tmp_path, "p.json", _peer(874.5, trials=50))]

    doc = assemble(ours, "new lease", previous, "headline_before", [], peer)

    assert doc["rlinf_bench"]["wall_s"] == [265.0, 234.0] and doc["lease"] == "new lease"
    assert doc["vla_eval"]["ours_over_vla_eval_episodes_per_h"] == [3.3, 3.74]
    assert doc["libero_10_end_to_end"] == previous["libero_10_end_to_end"]  # where the docs find it
    assert doc["harness_over_raw_15"] == [1.049, 1.004]  # carried: not part of these runs
    kept = doc["headline_before"]
    assert kept["lease"] == "old lease" and kept["rlinf_bench"]["wall_s"] == [297.2, 298.4]
    assert kept["vla_eval"]["episodes"] == [100, 100]  # the earlier pair, replaced by this lease's
    assert "libero_10_end_to_end" not in kept and "benchmark" not in kept
