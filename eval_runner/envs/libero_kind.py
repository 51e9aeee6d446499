"""The LIBERO env kind: MuJoCo scenes in worker processes, batched policy calls (:mod:`eval_runner.loop`).

Its options are the evaluate command's general ones (``--protocol``, ``--settle-steps``, ``--workers``…,
:func:`eval_runner.cli.add_arguments`); it adds none of its own. Before the loop starts, the Job's doctor
checks (:func:`rlinf_doctor.preflight.eval_preflight`) stop a broken setup in seconds, with the fix in the
result file.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from eval_runner.envs.kinds import EnvKind
from rlinf_bench.contracts import EvalRun, RunResult

if TYPE_CHECKING:
    from eval_runner.settings import EvalSettings

__all__ = ["KIND", "evaluate", "list_tasks"]


def _no_arguments(group: argparse._ArgumentGroup) -> None:
    """LIBERO's options are the general ones."""


def list_tasks(suite_name: str) -> str:
    """The ``--list-tasks`` table: id, max steps, task name and the instruction the policy receives."""
    from rlinf_bench.suites import get_suite

    suite = get_suite(suite_name)
    lines = [
        f"{suite.name}: {suite.n_tasks} tasks, {suite.init_states} initial states each, max steps {suite.max_steps}"
    ]
    lines += [f'{t.task_id:>3}  {t.name}\n     "{t.language}"' for t in suite.tasks()]
    return "\n".join(lines)


def settings_from_args(args: argparse.Namespace) -> EvalSettings:
    """The ``evaluate`` command line's run settings (what is not part of the EvalRun)."""
    from eval_runner.settings import EvalSettings

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


def evaluate(run: EvalRun, out: str, args: argparse.Namespace, command: Sequence[str]) -> RunResult:
    """Preflight, then the worker loop; the RunResult is written to ``out`` as it grows."""
    from eval_runner.loop import evaluate as evaluate_libero
    from rlinf_doctor.preflight import eval_preflight

    settings = settings_from_args(args)
    doctor = eval_preflight(run, out=out, cache_dir=args.cache_dir, command=command, write=not args.resume)
    return evaluate_libero(
        run, out_path=out, settings=settings, command=command, provenance_extra={"doctor": doctor.record()}
    )


KIND = EnvKind(
    name="libero",
    title="LIBERO suites",
    add_arguments=_no_arguments,
    options=(),
    list_tasks=list_tasks,
    evaluate=evaluate,
)
