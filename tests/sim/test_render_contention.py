"""``bench/render_contention.py`` on a real LIBERO scene: every layout renders what robosuite renders.

The bench exists to choose how workers' renders could be grouped (GL contexts shared, both cameras drawn
before either is read, rows batched). A grouping is only worth measuring if the policy would see the same
pixels, so each layout's first images are compared bit for bit with robosuite's ``MjSim.render``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.sim

ROOT = Path(__file__).resolve().parents[2]


def test_given_every_layout_then_each_renders_robosuites_pixels_and_paces_its_rows(tmp_path: Path) -> None:
    out = tmp_path / "render_contention.json"
    cmd = [sys.executable, "bench/render_contention.py", "--scenes", "2", "--groups", "2", "--resolution", "32"]
    cmd += ["--layouts", "procs,shared,groups,procs-pair,batched", "--rows-per-s", "2", "--seconds", "1"]
    cmd += ["--rounds", "1", "--batch-ms", "100", "--out", str(out)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    doc = json.loads(out.read_text())
    runs = {r["layout"]: r for r in doc["runs"]}
    assert {name: r["gl_contexts"] for name, r in runs.items()} == {
        "procs": 2,
        "shared": 1,
        "groups": 2,
        "procs-pair": 2,
        "batched": 1,
    }
    for run in runs.values():
        assert run["identical_to_robosuite"] is True
        assert run["rows_rendered"] >= 2 and run["render_ms_median"] > 0


def test_given_mirrors_skipped_then_the_layout_reruns_without_the_mirror_pass_and_reports_the_pixels(
    tmp_path: Path,
) -> None:
    out = tmp_path / "render_contention.json"
    cmd = [sys.executable, "bench/render_contention.py", "--scenes", "1", "--resolution", "64", "--layouts", "procs"]
    cmd += ["--mirrors", "drawn,skipped", "--rows-per-s", "2", "--seconds", "1", "--rounds", "1", "--out", str(out)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    summary = json.loads(out.read_text())["summary"]
    assert summary["procs"]["identical_to_robosuite"] == [True]
    # LIBERO-Spatial's stove base is a reflective box: without its pass the stove top renders differently,
    # and the run says so rather than passing itself off as robosuite's images
    assert summary["procs, mirrors skipped"]["identical_to_robosuite"] == [False]
    agentview = summary["procs, mirrors skipped"]["pixels_changed"][0][0]
    assert 0 < agentview < 64 * 64 * 0.05
