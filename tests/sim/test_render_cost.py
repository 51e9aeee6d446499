"""``bench/render_cost.py`` on LIBERO-Spatial's scene: what a render draws, and what the mirror pass adds.

The bench's ``main`` runs in this process; the scene it exports is built once per session (``render_scenes.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import render_cost
from tests.sim.render_scenes import export_each_scene_once

pytestmark = pytest.mark.sim


def test_given_libero_spatial_then_each_camera_draws_the_scene_twice_for_the_stove_and_culling_could_save_little(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    export_each_scene_once(render_cost, monkeypatch, tmp_path_factory)
    out = tmp_path / "render_cost.json"
    args = ["--suites", "libero_spatial", "--resolution", "64", "--rows", "1", "--rounds", "1", "--out", str(out)]
    assert render_cost.main(args) == 0

    doc = json.loads(out.read_text())
    assert "bench/render_cost.py --suites libero_spatial --resolution 64" in doc["command"]  # how to rerun it
    scene = doc["scenes"]["libero_spatial"]
    assert scene["identical_to_robosuite"] is True
    agentview, wrist = scene["cameras"]["agentview"], scene["cameras"]["robot0_eye_in_hand"]
    assert agentview["mirror_geoms"] == ["flat_stove_1_base_vis"] and agentview["scene_passes"] == 2
    # the high-poly bowls and the robot fill the front camera's view; the wrist camera sees less of the scene
    assert 0.8 < agentview["in_view_share"] <= 1.0
    assert wrist["in_view_share"] < agentview["in_view_share"]
    assert 0 < scene["pixels_changed_without_mirrors"]["agentview"] < 64 * 64 * 0.05
    assert set(scene["ms_per_row"]) == {"mirrors_drawn", "mirrors_skipped"}
