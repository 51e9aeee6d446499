"""The published robustness suites through ``rlinf-bench pipeline``: a LIBERO-PRO and a LIBERO-plus suite in one
eval matrix are planned, run as Jobs, aggregated and published like LIBERO's, each report row under its suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlinf_local.budget import small_matrix
from tests.e2e.conftest import rlinf_bench

pytestmark = [pytest.mark.sim, pytest.mark.slow]

#: liberoplus_spatial task 608: a camera-viewpoint variant of libero_spatial task 0 (LIBERO-plus's mapping).
CAMERA_VARIANT = 608


def test_given_liberopro_and_liberoplus_suites_then_the_pipeline_reports_both(
    demo_checkpoint: Path, tmp_path: Path
) -> None:
    matrix = small_matrix(
        tmp_path / "scratch", max_steps=3, tasks=(0,), trials=1, runs=1, workers=1, probes=(), videos=0
    )
    matrix["suites"] = [
        {"name": "LIBERO-PRO goal lan", "tasks": [0], "max_steps": 3},
        {"name": "liberoplus_spatial", "tasks": [CAMERA_VARIANT], "max_steps": 3},
    ]
    matrix["baselines"] = ["previous"]
    config = tmp_path / "published.yaml"
    config.write_text(json.dumps(matrix))
    out = tmp_path / "out"

    cli = rlinf_bench(
        "pipeline", "--checkpoint", str(demo_checkpoint), "--config", str(config), "--out", str(out), "--json"
    )

    assert cli.returncode == 0, cli.stderr[-3000:]
    doc = cli.json()
    (execution,) = doc["executions"]
    assert execution["status"] == "SUCCEEDED" and execution["runs_done"] == 2 and doc["failures"] == []
    pages = {p.parent.name for p in (out / "report" / "checkpoints").glob("*/*/task_0.html")}
    pages |= {p.parent.name for p in (out / "report" / "checkpoints").glob(f"*/*/task_{CAMERA_VARIANT}.html")}
    assert pages == {"liberopro_goal_language", "liberoplus_spatial"}
