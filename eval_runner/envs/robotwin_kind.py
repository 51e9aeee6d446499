"""The RoboTwin 2.0 env kind: its options, its task listing and its run (:mod:`eval_runner.envs.robotwin_run`).

Suites: ``robotwin`` (the brief's 12 tasks), ``robotwin_short`` / ``_medium`` / ``_long`` /
``_extra_long`` (one horizon group), ``robotwin_long_xl`` (the brief's merged column), and
``robotwin/<task>`` for any of the runtime's 50 tasks. The runtime lives in its own venv
(``make setup-robotwin``) or image; this module imports nothing of it, so ``--help`` lists these
options in the main venv too.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence

from eval_runner.envs.kinds import EnvKind
from rlinf_bench.contracts import EvalRun, RunResult

log = logging.getLogger(__name__)

__all__ = ["KIND", "add_arguments", "evaluate", "list_tasks"]


def add_arguments(group: argparse._ArgumentGroup) -> None:
    """The RoboTwin-only options (None when not given: the kind fills in the defaults)."""
    group.add_argument(
        "--assets", metavar="DIR", help="asset snapshot root (default: $ROBOTWIN_ASSETS_ROOT, else the runtime's: cwd)"
    )
    group.add_argument("--task-config", help="the runtime's task config: demo_randomized (default) | demo_clean")
    group.add_argument("--planner", choices=("mplib", "curobo"), help="the expert's motion planner (default mplib)")
    group.add_argument("--instruction-type", choices=("seen", "unseen"), help="instruction templates (default unseen)")


def list_tasks(suite: str) -> str:
    """Task ids, step limits, horizon groups and descriptions, read from the installed runtime."""
    from eval_runner.envs.robotwin_tasks import suite_tasks
    from rlinf_bench.robotwin import group_of_task

    tasks = suite_tasks(suite)
    lines = [f"{suite}: {len(tasks)} tasks (RoboTwin 2.0; each stops at its own step limit)"]
    for t in tasks:
        group = group_of_task(t.name) or "-"
        lines.append(f"{t.task_id:>3}  {t.name}  (limit {t.step_limit}, horizon {group})\n     {t.language!r}")
    return "\n".join(lines)


def evaluate(run: EvalRun, out: str, args: argparse.Namespace, command: Sequence[str]) -> RunResult:
    """Asset check, per-task seed walks and policy episodes; the RunResult is written to ``out`` as it grows."""
    from eval_runner.envs.robotwin_run import RoboTwinOptions, evaluate_robotwin

    if getattr(args, "resume", False):
        log.warning("--resume is not used for RoboTwin suites: the run starts over and rewrites %s", out)
    defaults = RoboTwinOptions()
    opts = RoboTwinOptions(
        assets=getattr(args, "assets", None),
        task_config=getattr(args, "task_config", None) or defaults.task_config,
        planner=getattr(args, "planner", None) or defaults.planner,
        instruction_type=getattr(args, "instruction_type", None) or defaults.instruction_type,
    )
    return evaluate_robotwin(run, out_path=out, opts=opts, command=command)


KIND = EnvKind(
    name="robotwin",
    title="RoboTwin 2.0 suites (robotwin, robotwin_<group>, robotwin/<task>; in .venv-robotwin or the RoboTwin image)",
    add_arguments=add_arguments,
    options=("assets", "task_config", "planner", "instruction_type"),
    list_tasks=list_tasks,
    evaluate=evaluate,
)
