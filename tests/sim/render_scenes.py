"""The render benches' LIBERO scene, exported once per test session instead of once per bench run.

``bench/render_contention.py`` and ``bench/render_cost.py`` each start by building a task's scene through
the evaluation's environment and freezing it to files (``bench.scene_render.export_scene``): most of a small
run's time. The files depend only on the suite, task and resolution, so the tests hand every later run with
the same three the files the first one wrote.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from types import ModuleType

import pytest

from bench.scene_render import SceneFiles, export_scene


@functools.cache
def _exported(root: Path, suite: str, task: int, resolution: int) -> SceneFiles:
    folder = root / f"{suite}-task{task}-{resolution}px"
    folder.mkdir(parents=True)
    config = os.environ.get("LIBERO_CONFIG_PATH")
    try:
        return export_scene(suite, task, resolution, folder)
    finally:  # export_scene points LIBERO at its default config; the other simulator tests set their own
        if config is None:
            os.environ.pop("LIBERO_CONFIG_PATH", None)
        else:
            os.environ["LIBERO_CONFIG_PATH"] = config


def export_each_scene_once(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Make ``bench``'s ``export_scene`` export a (suite, task, resolution) once per session, then reuse it."""
    root = tmp_path_factory.getbasetemp() / "render-scenes"

    def export(suite: str, task: int, resolution: int, folder: Path) -> SceneFiles:
        return _exported(root, suite, task, resolution)

    monkeypatch.setattr(bench, "export_scene", export)
