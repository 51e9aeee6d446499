"""``bench/worker_start.py`` on real LIBERO workers: what a worker costs before its first observation.

Its claim is that a worker no longer loads torch; ``/proc/<pid>/maps`` of each real worker says so. Each
variant's worker also starts a second episode from the RNG state its first reset left.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]


def test_given_one_worker_per_variant_then_only_the_old_variant_loads_torch_and_both_reach_a_first_obs(
    tmp_path: Path,
) -> None:
    out = tmp_path / "worker_start.json"
    cmd = [sys.executable, "bench/worker_start.py", "--workers", "1", "--rounds", "1", "--resolution", "32"]
    cmd += ["--starts", "1"]
    done = subprocess.run([*cmd, "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    doc = json.loads(out.read_text())
    runs = {r["variant"]: r for r in doc["runs"]}
    assert runs["as-built"]["workers_with_torch_loaded"] == 0
    assert runs["with-torch"]["workers_with_torch_loaded"] == 1
    assert runs["without-gc-freeze"]["workers_with_torch_loaded"] == 0
    for run in runs.values():
        assert len(run["first_obs_s"]) == 1 and run["cpu_s_per_worker"] > 0 and run["peak_rss_mib_per_worker"] > 0
        assert run["episode_starts"] == 1 and run["mean_episode_start_s"] > 0
    assert len(doc["summary"]["as_built_over_with_torch"]["cpu_s"]) == 1
    assert len(doc["summary"]["as_built_over_without_gc_freeze"]["mean_episode_start"]) == 1


def test_given_the_tracked_results_file_without_update_results_then_the_bench_refuses_to_write_it() -> None:
    tracked = ROOT / "bench" / "results" / "worker_start_cpu.json"
    before = tracked.read_bytes()
    cmd = [sys.executable, "bench/worker_start.py", "--rounds", "0", "--out", str(tracked)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "bench/results" in done.stderr
    assert tracked.read_bytes() == before


def test_given_two_workers_on_one_task_then_the_waiting_one_builds_its_scene_meanwhile(tmp_path: Path) -> None:
    # one round: with builtin:zero every round's outcomes are the same by construction (8 steps, never a success)
    out = tmp_path / "first_wave.json"
    cmd = [sys.executable, "bench/worker_start.py", "--first-wave", "--workers", "2", "--rounds", "1"]
    cmd += ["--resolution", "32", "--out", str(out)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    doc = json.loads(out.read_text())
    assert doc["summary"]["scenes_prepared"] == [1]
    assert [(state, success, steps) for state, success, steps in doc["runs"][0]["outcomes"]] == [
        (state, False, 8) for state in range(4)
    ]
