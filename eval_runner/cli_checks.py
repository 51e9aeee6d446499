"""What ``evaluate`` checks before its preflight starts (seconds of imports and doctor checks): the run's
arguments against its suite, and whether ``--out`` already holds finished episodes that a run would discard."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import UTC, datetime

from eval_runner.result_writer import ResultWriter
from rlinf_bench.contracts import EvalRun, RunResult, RunStatus
from rlinf_bench.contracts.results import Timings
from rlinf_bench.errors import ConfigError, ContractError, RlinfBenchError
from rlinf_bench.provenance import collect_provenance
from rlinf_bench.request_checks import check_run
from rlinf_doctor.nvml_gpus import NvmlGpus

__all__ = ["add_overwrite_arguments", "check_before_start"]


def add_overwrite_arguments(p: argparse.ArgumentParser) -> None:
    """``--resume`` and ``--overwrite``: what to do with the finished episodes a result file at ``--out`` holds."""
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--resume",
        action="store_true",
        help="keep the finished episodes of an unfinished result at --out and run only the rest",
    )
    which.add_argument(
        "--overwrite",
        action="store_true",
        help="start over even when --out holds finished episodes (without --resume or --overwrite that exits 2)",
    )


def check_before_start(run: EvalRun, out: str, args: argparse.Namespace, command: Sequence[str]) -> None:
    """Refuse a bad run or a run that would discard finished episodes, before any preflight (exit 2).

    A bad run still leaves a ``failed`` result at ``out`` saying why, as every run does, unless that file
    holds episodes (or ``--resume`` was asked for): those are never overwritten by a refusal.
    """
    existing = None if args.overwrite else _existing(out)
    keep = bool(args.resume or (existing is not None and existing.episodes))
    try:
        check_run(run)  # the Plan state's checks: suite, task ids, trials per task
    except RlinfBenchError as exc:
        if not keep:
            _write_failed(run, out, f"{type(exc).__name__}: {exc}", command)
        raise
    if existing is not None and existing.episodes and not args.resume:
        raise ConfigError(
            f"--out {out} already holds {existing.episodes} finished episode(s) (status {existing.status.value}); "
            "pass --resume to keep them and run only the rest, or --overwrite to start over"
        )


def _existing(out: str) -> RunResult | None:
    try:
        return ResultWriter(out).read_existing()
    except ContractError as exc:
        raise ConfigError(
            f"--out {out} holds a file that is not a RunResult ({exc}); give another --out, or --overwrite to replace it"
        ) from exc


def _write_failed(run: EvalRun, out: str, error: str, command: Sequence[str]) -> None:
    now = datetime.now(UTC).isoformat(timespec="seconds")
    result = RunResult.of_run(
        run,
        RunStatus.FAILED,
        error=error,
        max_steps=run.max_steps or 1,
        settle_steps=0,
        timings=Timings(started_at=now, finished_at=now),
        provenance=collect_provenance(gpus=NvmlGpus(), command=command),
    )
    ResultWriter(out).write(result, final=True)
