"""`sam build` on a fresh copy of the repo: every artifact within its size goal and importable under 3.12."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("sam_artifacts", REPO / "deploy" / "tools" / "sam_artifacts.py")
assert _spec and _spec.loader
sam_artifacts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sam_artifacts)

ROUTER_GOAL_MB = 40  # the intake's cold start stays small: no kubernetes, no mlflow
FUNCTION_GOAL_MB = 200  # Lambda refuses more than 250 MB unzipped, layers included


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if not sam_artifacts.SAM.exists():
        message = "the SAM CLI is not installed (.venv-tools): run `make setup-tools`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    python = sam_artifacts.find_python312(None)
    if python is None:
        pytest.skip("no python3.12 here (pyenv's ~/.pyenv/versions/3.12.x or PATH) for the import check")
    work = tmp_path_factory.mktemp("fresh-clone")
    sam_artifacts.scratch_copy(REPO, work)
    result: dict[str, Any] = sam_artifacts.measure(work, python)
    return result


@pytest.mark.slow
def test_given_a_fresh_copy_then_sam_build_succeeds_without_docker_or_python312(figures: dict[str, Any]) -> None:
    assert figures["build_ok"], figures.get("error")
    assert len(figures["functions"]) == 8  # with the queue sentinel


@pytest.mark.slow
def test_given_the_artifacts_then_each_function_with_its_layer_stays_within_its_goal(figures: dict[str, Any]) -> None:
    functions = figures["functions"]
    assert functions["CheckpointRouterFunction"]["with_layer_mb"] < ROUTER_GOAL_MB
    for name, f in functions.items():
        assert f["with_layer_mb"] < FUNCTION_GOAL_MB, f"{name}: {f['with_layer_mb']} MB with the layer"
    # One copy of rlinf_bench and pydantic: the functions carry only what the layer lacks.
    assert functions["CheckpointRouterFunction"]["code_mb"] < 1


@pytest.mark.slow
def test_given_each_built_function_then_it_imports_under_python312_with_its_layer(figures: dict[str, Any]) -> None:
    failed = {name: f["error"] for name, f in figures["functions"].items() if not f["imports"]}
    assert failed == {}
