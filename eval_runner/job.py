"""One ``evaluate`` invocation, parsed once at the edge and run once.

:func:`job_from_args` turns the command line (and the ``--request`` document it names, read once) into an
:class:`EvalJob`: the EvalRun, where its result goes, the env kind with its typed options, and the run
settings. :func:`run_job` runs it: the kind's start checks, then the one loop, with the provenance the
edge collected once.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

from eval_runner.envs.kinds import EnvKind, EnvOptions, check_options, kind_for_suite
from eval_runner.settings import EvalSettings
from rlinf_bench.contracts import EvalRun, Provenance, RunResult

__all__ = ["EvalJob", "job_from_args", "run_job", "settings_from_args"]


@dataclass(frozen=True)
class EvalJob:
    """What one ``evaluate`` runs: the run, its result file, its env kind and options, and how to run it."""

    run: EvalRun
    out: str
    kind: EnvKind
    env_options: EnvOptions
    settings: EvalSettings
    #: start over although ``out`` holds finished episodes (``--overwrite``)
    overwrite: bool
    command: tuple[str, ...]


def settings_from_args(args: argparse.Namespace) -> EvalSettings:
    """The ``evaluate`` command line's run settings (what is not part of the EvalRun)."""
    return EvalSettings(
        settle_steps=args.settle_steps,
        max_retries=args.max_retries,
        cache_dir=args.cache_dir,
        progress=not args.no_progress,
        worker_threads=args.worker_threads,
        resume=args.resume,
        batch_window_ms=args.batch_window_ms,
        max_batch=args.max_batch,
    )


def job_from_args(args: argparse.Namespace, run: EvalRun, command: Sequence[str]) -> EvalJob:
    """The job ``args`` describe around ``run`` (built from the flags and the request, see
    :func:`eval_runner.cli.build_run`); another kind's options are refused, not ignored."""
    from eval_runner.loop import default_output

    kind = kind_for_suite(run.suite)
    values = vars(args)
    check_options(kind, run.suite, values)
    return EvalJob(
        run=run,
        out=run.output_uri or default_output(run),
        kind=kind,
        env_options=kind.options_from(values),
        settings=settings_from_args(args),
        overwrite=bool(args.overwrite),
        command=tuple(command),
    )


def run_job(job: EvalJob, provenance: Provenance) -> RunResult:
    """The kind's start checks (their record joins the provenance), then the one loop."""
    from eval_runner.loop import evaluate

    doctor = job.kind.preflight(job.run, out=job.out, settings=job.settings, command=job.command, provenance=provenance)
    if doctor is not None:
        provenance = provenance.model_copy(update={"extra": {**provenance.extra, "doctor": doctor}})
    return evaluate(
        job.run,
        out_path=job.out,
        settings=job.settings,
        env_options=job.env_options,
        command=job.command,
        provenance=provenance,
    )
