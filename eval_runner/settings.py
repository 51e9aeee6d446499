"""Knobs of one evaluation that are not part of the EvalRun contract (they do not change what is measured,
or they are test-only)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from eval_runner.testing import FaultInjection


class EvalSettings(BaseModel):
    """How to run an evaluation (as opposed to *what* to evaluate, which is the EvalRun)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    settle_steps: int | None = Field(default=None, ge=0, description="None: the suite's default (10, as OpenVLA-OFT)")
    resume: bool = Field(
        default=False,
        description="Keep the episodes of an unfinished result at the output path and run only the rest",
    )
    max_retries: int = Field(default=2, ge=0, description="Re-runs of one episode after worker crashes before failing")
    cache_dir: Path | None = Field(default=None, description="LIBERO config and checkpoint downloads")
    progress: bool = Field(default=True, description="tqdm progress bar on stderr")
    start_method: str = Field(default="spawn", description="multiprocessing start method of the env workers")
    s3_write_interval_s: float = Field(default=15.0, ge=0, description="Minimum time between result uploads to S3")
    worker_threads: int | None = Field(
        default=None, ge=1, description="Compute threads per worker; None: usable cores // workers"
    )
    batch_window_ms: float = Field(
        default=0.0,
        ge=0,
        allow_inf_nan=False,
        description="Wait this long after the first ready observation for more rows before calling the policy "
        "(it is never called with fewer rows than are ready when it is free)",
    )
    max_batch: int | None = Field(default=None, ge=1, description="At most this many rows per policy call")
    step_timeout_s: float = Field(default=300.0, gt=0, description="A worker silent this long on a step is hung")
    start_timeout_s: float = Field(
        default=900.0, gt=0, description="A worker silent this long building a scene / resetting is hung"
    )
    # TEST/DIAGNOSTICS ONLY ------------------------------------------------------------------------
    fault_injection: FaultInjection | None = None  # test-only (eval_runner.testing)
    scene_hook: str | None = Field(
        default=None,
        description="TEST-ONLY 'module:function' called in the worker with the LiberoEnv after settling",
    )
