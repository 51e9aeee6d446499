"""``python -m eval_runner.robotwin``: evaluate a checkpoint on a RoboTwin 2.0 suite.

Suites: ``robotwin`` (the brief's 12 tasks), ``robotwin_short`` / ``_medium`` / ``_long`` /
``_extra_long`` (one horizon group), ``robotwin_long_xl`` (the brief's merged column), and
``robotwin/<task>`` for any of the runtime's 50 tasks. ``python -m eval_runner --suite robotwin...``
comes here too, with the defaults below. Exit status: 0 complete; 2 bad input, missing assets or a
failed run (the message says what to fix); 130 interrupted.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Sequence
from types import FrameType

from eval_runner.cli import add_arguments, build_run, format_table
from rlinf_aws.task_callback import TaskCallback, report_run_result, reporting_to_state_machine
from rlinf_bench.errors import RlinfBenchError

__all__ = ["add_robotwin_arguments", "list_tasks", "main", "run_robotwin"]


def add_robotwin_arguments(p: argparse.ArgumentParser) -> None:
    """The RoboTwin-only options."""
    p.add_argument(
        "--assets", metavar="DIR", help="asset snapshot root (default: $ROBOTWIN_ASSETS_ROOT, else the runtime's: cwd)"
    )
    p.add_argument(
        "--task-config", default="demo_randomized", help="the runtime's task config: demo_randomized | demo_clean"
    )
    p.add_argument("--planner", default="mplib", choices=("mplib", "curobo"), help="the expert's motion planner")
    p.add_argument("--instruction-type", default="unseen", choices=("seen", "unseen"), help="instruction templates")


def list_tasks(suite: str) -> str:
    """Task ids, step limits, horizon groups and descriptions, read from the installed runtime."""
    from eval_runner.robotwin.registry import suite_tasks
    from rlinf_bench.robotwin import group_of_task

    tasks = suite_tasks(suite)
    lines = [f"{suite}: {len(tasks)} tasks (RoboTwin 2.0; each stops at its own step limit)"]
    for t in tasks:
        group = group_of_task(t.name) or "-"
        lines.append(f"{t.task_id:>3}  {t.name}  (limit {t.step_limit}, horizon {group})\n     {t.language!r}")
    return "\n".join(lines)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def run_robotwin(args: argparse.Namespace) -> int:
    """Run the RoboTwin evaluation ``args`` describes; returns the exit status."""
    from eval_runner.loop import default_output
    from eval_runner.robotwin.runner import RoboTwinOptions, evaluate_robotwin

    if args.list_tasks:
        print(list_tasks(args.suite or "robotwin"))
        return 0
    opts = RoboTwinOptions(
        assets=getattr(args, "assets", None),
        task_config=getattr(args, "task_config", None) or "demo_randomized",
        planner=getattr(args, "planner", None) or "mplib",
        instruction_type=getattr(args, "instruction_type", None) or "unseen",
    )
    # Started by the state machine: heartbeats while running, then one callback, as LIBERO Jobs do.
    with reporting_to_state_machine(TaskCallback.from_env()) as callback:
        eval_run = build_run(args)
        out = eval_run.output_uri or default_output(eval_run)
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)  # a stopped pod writes an incomplete result
        try:
            result = evaluate_robotwin(eval_run, out_path=out, opts=opts, command=sys.argv)
        finally:
            signal.signal(signal.SIGTERM, previous)
        report_run_result(callback, out, result)
    print(format_table(result))
    print(f"result: {out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m eval_runner.robotwin``."""
    parser = argparse.ArgumentParser(prog="python -m eval_runner.robotwin", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    add_arguments(parser)
    add_robotwin_arguments(parser)
    args = parser.parse_args(argv)
    if not args.suite and not args.request:
        args.suite = "robotwin"
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        return run_robotwin(args)
    except RlinfBenchError as exc:  # ContractError and AssetsMissingError included
        print(f"eval_runner: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("eval_runner: interrupted; finished episodes are in the result file (status incomplete)", file=sys.stderr)
        return 130
