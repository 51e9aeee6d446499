"""The evaluator's public Python API: the names a script uses to run an evaluation, write or load a policy,
serve one, or step a LIBERO task as the evaluator builds it.

Everything else in ``eval_runner`` is internal and changes with the evaluator (docs/architecture.md, "Public
entry points"). bench/ imports the evaluator through this module only; import-linter checks it.

- Running an evaluation: :func:`evaluate` with an ``EvalRun`` and :class:`EvalSettings`, or
  :func:`parse_evaluate_args` to get both from ``rlinf-bench evaluate``'s own command line.
- Policies (docs/policies.md): :class:`Policy`, :class:`ObservationSpec`, ``ACTION_DIM``, :func:`load_policy`
  for any policy spec, :func:`write_demo_checkpoint` for ``builtin:demo``'s checkpoint.
- Serving: :func:`serve_policy` runs ``rlinf-bench serve-policy`` in this process; to build your own server,
  :class:`PolicyServer`, :class:`ServerBatching`, and the command's CPU placement (:func:`reserved_cpus`,
  :func:`limit_torch_threads`, :func:`pin_process`).
- A LIBERO task as a worker steps it: :func:`configure_libero` (before LIBERO is imported),
  :func:`limit_threads` (a worker's thread caps), :class:`LiberoEnv`, and the reference RNG chain its
  ``start_episode`` takes (:class:`RngStart`, :func:`seeded_state`); why its episode failed, as the worker
  records it: :class:`LiberoFailureTracker` (``start`` with ``env.raw_env.env``, ``observe`` after each step,
  ``cause`` at the end: a :class:`FailureCause`).
- A rollout worker process on its own, to measure its start-up (bench/worker_start.py):
  :class:`WorkerConfig` with LIBERO's scenes (:class:`LiberoScenes`), :class:`WorkerHandle`, :class:`EpisodeTask`,
  :func:`worker_main`, :func:`close_all`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from eval_runner.demo_checkpoint import write_demo_checkpoint
from eval_runner.env import LiberoEnv
from eval_runner.envs.libero_failures import LiberoFailureTracker
from eval_runner.envs.libero_scene import LiberoScenes
from eval_runner.failure_reasons import FailureCause
from eval_runner.libero_setup import configure_libero
from eval_runner.loop import evaluate
from eval_runner.policies.base import ACTION_DIM, ObservationSpec, Policy
from eval_runner.policies.factory import load_policy
from eval_runner.policies.request_batching import ServerBatching
from eval_runner.policies.serve_cli import limit_torch_threads, pin_process, reserved_cpus
from eval_runner.policies.server import PolicyServer
from eval_runner.scheduler import EpisodeTask, RngStart, seeded_state
from eval_runner.settings import EvalSettings
from eval_runner.vector import WorkerConfig, WorkerHandle, close_all, limit_threads, worker_main
from rlinf_bench.contracts import EvalRun

__all__ = [
    "ACTION_DIM",
    "EpisodeTask",
    "EvalSettings",
    "FailureCause",
    "LiberoEnv",
    "LiberoFailureTracker",
    "LiberoScenes",
    "ObservationSpec",
    "Policy",
    "PolicyServer",
    "RngStart",
    "ServerBatching",
    "WorkerConfig",
    "WorkerHandle",
    "close_all",
    "configure_libero",
    "evaluate",
    "limit_threads",
    "limit_torch_threads",
    "load_policy",
    "parse_evaluate_args",
    "pin_process",
    "reserved_cpus",
    "seeded_state",
    "serve_policy",
    "worker_main",
    "write_demo_checkpoint",
]


def parse_evaluate_args(argv: Sequence[str]) -> tuple[EvalRun, EvalSettings]:
    """The ``EvalRun`` and settings that ``rlinf-bench evaluate ARGV`` would run a LIBERO suite with.

    The command's own parser and checks build them; what the command adds around :func:`evaluate` (the
    environment preflight, the callback to the state machine, the printed table) is left to the caller.
    Bad arguments exit as the command does (status 2, the message on stderr).
    """
    from eval_runner.cli import add_arguments, build_run
    from eval_runner.job import settings_from_args

    parser = argparse.ArgumentParser(prog="rlinf-bench evaluate")
    add_arguments(parser)
    args = parser.parse_args(list(argv))
    return build_run(args), settings_from_args(args)


def serve_policy(argv: Sequence[str]) -> int:
    """``rlinf-bench serve-policy ARGV`` in this process, with the command's own parser; serves until stopped.

    For a tree that is not pip-installed (the command finds its subcommands through the package's entry
    points): ``python -c 'import sys; from eval_runner.api import serve_policy; sys.exit(serve_policy(sys.argv[1:]))'
    --policy SPEC --port 8765``.
    """
    from eval_runner.policies import serve_cli

    parser = argparse.ArgumentParser(prog="rlinf-bench")
    serve_cli.register(parser.add_subparsers())
    args = parser.parse_args(["serve-policy", *argv])
    return int(args.func(args))
