"""``bench/render_contention.py`` on a real LIBERO scene: every layout renders what robosuite renders.

The bench exists to choose how workers' renders could be grouped (GL contexts shared, both cameras drawn
before either is read, rows batched). A grouping is only worth measuring if the policy would see the same
pixels, so each layout's first images are compared bit for bit with robosuite's ``MjSim.render``.

The bench's ``main`` runs in this process (its render processes are its own, as on a GPU node); the scene
it exports is built once per session (``render_scenes.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import render_contention
from tests.sim.render_scenes import export_each_scene_once

pytestmark = pytest.mark.sim


def run_bench(args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scenes: pytest.TempPathFactory) -> Any:
    """``bench/render_contention.py ARGS`` on the session's exported scene: its results file."""
    export_each_scene_once(render_contention, monkeypatch, scenes)
    out = tmp_path / "render_contention.json"
    assert render_contention.main([*args, "--out", str(out)]) == 0
    return json.loads(out.read_text())


def test_given_every_layout_then_each_renders_robosuites_pixels_and_paces_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    args = [
        "--scenes",
        "2",
        "--groups",
        "2",
        "--resolution",
        "64",
        "--layouts",
        "procs,shared,groups,procs-pair,batched",
    ]
    # 3 s: under the test suite's load one 64 px row took up to 0.95 s to render, so 1 s held a single row
    args += ["--rows-per-s", "2", "--seconds", "3", "--rounds", "1", "--batch-ms", "100"]
    doc = run_bench(args, tmp_path, monkeypatch, tmp_path_factory)

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
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    args = ["--scenes", "1", "--resolution", "64", "--layouts", "procs", "--mirrors", "drawn,skipped"]
    args += ["--rows-per-s", "2", "--seconds", "1", "--rounds", "1"]
    summary = run_bench(args, tmp_path, monkeypatch, tmp_path_factory)["summary"]

    assert summary["procs"]["identical_to_robosuite"] == [True]
    # LIBERO-Spatial's stove base is a reflective box: without its pass the stove top renders differently,
    # and the run says so rather than passing itself off as robosuite's images
    assert summary["procs, mirrors skipped"]["identical_to_robosuite"] == [False]
    agentview = summary["procs, mirrors skipped"]["pixels_changed"][0][0]
    assert 0 < agentview < 64 * 64 * 0.05
