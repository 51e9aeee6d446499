"""Helpers shared by the simulator tests."""

from __future__ import annotations

from pathlib import Path

from eval_runner.settings import EvalSettings
from rlinf_bench.contracts import CheckpointRef, EvalRun

NO_CHECKPOINT = CheckpointRef(uri="", experiment="none", global_step=0)
REPO = Path(__file__).resolve().parents[2]


def make_run(**overrides: object) -> EvalRun:
    """A tiny run on libero_spatial task 0 with the zero policy; override any field."""
    fields: dict[str, object] = {
        "request_id": "simtest",
        "checkpoint": NO_CHECKPOINT,
        "suite": "libero_spatial",
        "run_index": 0,
        "seed": 0,
        "task_ids": [0],
        "trials": 1,
        "max_steps": 5,
        "policy": "builtin:zero",
        "workers": 1,
    }
    fields.update(overrides)
    return EvalRun.model_validate(fields)


def settings(cache: Path, **overrides: object) -> EvalSettings:
    return EvalSettings.model_validate({"cache_dir": cache, "progress": False, **overrides})
