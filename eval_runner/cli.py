"""``python -m eval_runner`` / ``rlinf-bench evaluate``: evaluate one checkpoint on one suite.

One command for every env kind (:mod:`eval_runner.envs`): the suite picks it, LIBERO
(``libero_spatial``…) or RoboTwin 2.0 (``robotwin``, ``robotwin_<group>``, ``robotwin/<task>``; in
.venv-robotwin or the RoboTwin image). The run is described either by flags or by an EvalRun document (``--request``: a JSON file, an
``s3://`` URI of one, or inline JSON as Kubernetes Jobs pass it); explicit flags override the
document's fields. Exit status: 0 complete; 2 bad input or failed run (the message names the input
and the fix); 130 interrupted. The result file is written in every case.
"""

from __future__ import annotations

import argparse
import logging
import math
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from eval_runner.cli_checks import add_overwrite_arguments, check_before_start
from eval_runner.envs.kinds import all_kinds, kind_for_suite
from eval_runner.job import job_from_args, run_job
from eval_runner.run_estimate import long_run_notice
from rlinf_aws.s3_objects import S3Objects
from rlinf_aws.task_callback import TaskCallback, report_run_result, reporting_to_state_machine
from rlinf_bench.checkpoints.keys import ref_for_location
from rlinf_bench.contracts import CheckpointRef, EvalRun, RunResult, request_id_for
from rlinf_bench.document_store import Storage, is_s3, parse_s3
from rlinf_bench.errors import ConfigError, ContractError, RlinfBenchError, StorageError
from rlinf_bench.provenance import collect_provenance
from rlinf_bench.reporting.text_safety import error_line
from rlinf_clikit.arguments import UsageError, add_target_argument, target_of
from rlinf_clikit.help_format import ExampleFormatter
from rlinf_clikit.output import add_json_flag, emit_json, quiet_stdout
from rlinf_doctor.nvml_gpus import NvmlGpus

log = logging.getLogger("eval_runner")

#: ``evaluate --help``'s description (the module docstring is written for developers).
DESCRIPTION = (
    "Evaluate one checkpoint on one suite with real rollouts: LIBERO (libero_spatial, libero_object, "
    "libero_goal, libero_10, libero_90) or RoboTwin 2.0 (robotwin, robotwin_<group>, robotwin/<task>; in "
    ".venv-robotwin or the RoboTwin image). Describe the run with flags, or with an EvalRun document "
    "(--request: a JSON file, an s3:// URI of one, or inline JSON); flags override its fields. "
    "Exit status: 0 complete; 2 bad input or a failed run (the message names the input and the fix); "
    "130 interrupted. The result file (--out) is written in every case; one that holds finished episodes "
    "is kept unless --resume or --overwrite says what to do with them."
)

#: The suite of a run that names none.
DEFAULT_SUITE = "libero_spatial"


class PolicyOption(argparse._StoreAction):
    """``--policy SPEC``, whose help lists every policy kind from the policy registries. The list is read when
    the help is shown, not when the parser is built: loading the policy plugins takes a few tenths of a second
    that no other command should pay."""

    @property
    def help(self) -> str:
        from eval_runner.policies.factory import policy_kinds

        return (
            f"the policy to evaluate, SCHEME:TARGET[?key=value&...]: {' | '.join(policy_kinds())} "
            "(default builtin:demo; the options of each: docs/policies.md)"
        )

    @help.setter
    def help(self, value: str | None) -> None:
        pass  # argparse sets it from add_argument(help=...): the property above is the help


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The evaluate options (shared by the entry points), then each env kind's own options in a group."""
    p.add_argument("--request", metavar="VALUE", help="EvalRun JSON: a file path, an s3:// URI, or inline JSON")
    add_target_argument(
        p,
        "checkpoint",
        metavar="CHECKPOINT",
        help="global_step_<N> directory or s3://bucket/prefix (default: the request's, else none)",
        required=False,
    )
    p.add_argument(
        "--suite",
        metavar="NAME",
        help="libero_spatial (default) | libero_object | libero_goal | libero_10 | libero_90 | robotwin | "
        "robotwin_<group> | robotwin/<task>; the brief's spellings work too (LIBERO-Long and libero_long are "
        "libero_10, LIBERO-Spatial is libero_spatial)",
    )
    p.add_argument("--tasks", metavar="IDS", help="comma-separated task ids, e.g. 0,3,5 (default: all)")
    p.add_argument(
        "--trials",
        "--trials-per-task",
        dest="trials",
        type=int,
        metavar="N",
        help="episodes per task, one per fixed initial state (default 50)",
    )
    p.add_argument(
        "--protocol",
        choices=("oft", "rlinf"),
        help="episode settings of a reference evaluation: rlinf (default: RLinf v0.3's, as the paper's baseline, "
        "512/520 steps, 15 settle steps at gripper 0) or oft (OpenVLA-OFT's max steps, 10 settle steps with the "
        "gripper open); both render 256 px",
    )
    p.add_argument("--max-steps", type=int, metavar="N", help="policy steps per episode (default: the protocol's)")
    p.add_argument("--seed", type=int, metavar="S", help="run seed; episode seeds derive from it (default 0)")
    p.add_argument("--run-index", type=int, metavar="K", help="index of this run among the request's runs (default 0)")
    p.add_argument("--policy", metavar="SPEC", action=PolicyOption)
    p.add_argument("--workers", type=int, metavar="N", help="environment worker processes (default 1)")
    p.add_argument("--out", metavar="FILE", help="result JSON: a local path or s3://bucket/key")
    p.add_argument(
        "--videos",
        type=int,
        metavar="K",
        help="keep MP4 videos of up to K episodes per task, failures first (default 0)",
    )
    p.add_argument(
        "--settle-steps", type=int, metavar="N", help="no-op steps after reset (default: the protocol's, 10 or 15)"
    )
    p.add_argument(
        "--settle-gripper",
        type=float,
        metavar="G",
        help="gripper value of the settle action, -1 (open) to 1 (default: the protocol's, -1 or 0)",
    )
    p.add_argument(
        "--resolution",
        type=int,
        metavar="PX",
        help="camera render resolution (default: the policy's, else the protocol's 256)",
    )
    p.add_argument(
        "--on-episode-error",
        choices=("fail-run", "fail-episode"),
        help="a simulator exception in a step fails the run (default) or counts as a failed episode, as OpenVLA-OFT",
    )
    p.add_argument(
        "--robustness",
        metavar="AXES",
        help="also play perturbed episodes, each beside its unperturbed twin (the standard episode of the same "
        "initial state): quick (all seven axes at level 2, one per perturbed initial state in turn: +10%% episodes), "
        "full (every axis at levels 1-3 on each perturbed initial state: +210%%), or AXIS[:LEVELS],... with axes "
        "layout, camera, robot_init, language, light, texture, noise and levels 0-3, e.g. camera:1,2,3,light:2; the "
        "perturbed initial states are the first tenth of each task's trials; off (default): none "
        "(docs/robustness.md)",
    )
    p.add_argument("--max-retries", type=int, metavar="N", default=2, help="re-runs of an episode after worker crashes")
    p.add_argument(
        "--worker-threads", type=int, metavar="N", help="compute threads per worker (default: cores // workers)"
    )
    p.add_argument(
        "--batch-window-ms",
        type=milliseconds,
        metavar="MS",
        default=0.0,
        help="wait up to MS for more ready observations before a policy call (default 0: call with what is "
        "ready; a slow policy batches the rows that arrive during its previous call anyway)",
    )
    p.add_argument("--max-batch", type=int, metavar="N", help="at most N observations per policy call")
    p.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="LIBERO config and checkpoint cache (default ~/.cache/rlinf-bench)",
    )
    add_overwrite_arguments(p)
    p.add_argument(
        "--list-tasks", action="store_true", help="print the suite's task ids, names and instructions; run nothing"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_json_flag(p, "the RunResult")
    for kind in all_kinds():
        if kind.flags:
            kind.add_arguments(p.add_argument_group(kind.title))


def register(sub: Any) -> None:
    """Add ``evaluate`` to ``rlinf-bench``."""
    p = sub.add_parser(
        "evaluate",
        help="evaluate a checkpoint on a LIBERO or RoboTwin suite",
        description=DESCRIPTION,
        epilog="example: rlinf-bench evaluate runs/exp/checkpoints/global_step_400 "
        "--suite libero_spatial --workers 4 --out results/spatial-run0.json",
        formatter_class=ExampleFormatter,
    )
    add_arguments(p)
    p.set_defaults(func=run)


def load_request(value: str, *, s3_client: Any = None) -> EvalRun:
    """An EvalRun from inline JSON (starts with '{'), an s3:// URI or a file path."""
    text = value.strip()
    if text.startswith("{"):
        return EvalRun.from_json(text, source="--request (inline JSON)")
    if is_s3(text):
        parse_s3(text, what="--request", need_key=True)
        try:
            body = Storage(S3Objects(s3_client)).read_bytes(text)
        except StorageError as exc:  # missing object, NoCredentialsError, EndpointConnectionError
            raise ConfigError(f"cannot read --request {text}: {exc}; check the URI and the pod's S3 access") from exc
        return EvalRun.from_json(body, source=text)
    path = Path(text)
    if not path.is_file():
        raise ConfigError(f"--request {text!r} is neither inline JSON, an s3:// URI nor an existing file")
    return EvalRun.load(path)


def milliseconds(text: str) -> float:
    """A ``--batch-window-ms`` value: a finite number of milliseconds, 0 or more."""
    value = float(text)  # a ValueError becomes argparse's "invalid milliseconds value"
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text}: give a finite number of milliseconds, 0 or more")
    return value


def parse_task_ids(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"--tasks {text!r} must be comma-separated integers, e.g. 0,3,5") from None


def build_run(args: argparse.Namespace, *, request: EvalRun | None = None, s3_client: Any = None) -> EvalRun:
    """The EvalRun from the request (``request``, already read, else ``--request``) with explicit flags on top."""
    base: dict[str, Any] = {}
    if request is None and args.request:
        request = load_request(args.request, s3_client=s3_client)
    if request is not None:
        base = request.model_dump()
    overrides = {
        "suite": args.suite,
        "task_ids": parse_task_ids(args.tasks) if args.tasks else None,
        "trials_per_task": args.trials,
        "max_steps": args.max_steps,
        "seed": args.seed,
        "run_index": args.run_index,
        "policy": args.policy,
        "workers": args.workers,
        "videos": args.videos,
        "protocol": args.protocol,
        "settle_steps": args.settle_steps,
        "settle_gripper": args.settle_gripper,
        "resolution": args.resolution,
        "on_episode_error": args.on_episode_error,
        "robustness": args.robustness,
        "output_uri": args.out,
    }
    base.update({k: v for k, v in overrides.items() if v is not None})
    checkpoint = target_of(args, "checkpoint")
    if checkpoint:
        base["checkpoint"] = ref_for_location(checkpoint).model_dump()
    base.setdefault("checkpoint", CheckpointRef(uri="", experiment="none", global_step=0).model_dump())
    base.setdefault("suite", DEFAULT_SUITE)
    base.setdefault("seed", 0)
    base.setdefault("run_index", 0)
    if not base.get("request_id"):
        ref = CheckpointRef.model_validate(base["checkpoint"])
        base["request_id"] = request_id_for(ref) if ref.uri else "local"
    return EvalRun.from_dict(base, source="the command line")


def format_table(result: RunResult) -> str:
    """Per-task success table, as printed at the end of a run."""
    lines = [f"{'task':>4}  {'success':>9}  {'SR':>6}  name"]
    for t in result.tasks:
        done = len(t.episodes)
        lines.append(f"{t.task_id:>4}  {t.successes:>4}/{done:<4}  {t.success_rate:>6.1%}  {t.task_name}")
    lines.append(
        f"{'all':>4}  {result.successes:>4}/{result.episodes:<4}  {result.success_rate:>6.1%}  "
        f"{result.suite} run {result.run_index} ({result.status.value})"
    )
    return "\n".join(lines)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def list_tasks(args: argparse.Namespace) -> str:
    """``--list-tasks``: the table of the suite the run names (flag over request)."""
    suite = args.suite or (load_request(args.request).suite if args.request else DEFAULT_SUITE)
    return kind_for_suite(suite).list_tasks(suite)


def run(args: argparse.Namespace) -> int:
    """Run the evaluation described by ``args`` with the env kind its suite needs; returns the exit status."""
    as_json = getattr(args, "json", False)
    if args.list_tasks:
        if as_json:
            raise ConfigError("--list-tasks prints a table, not JSON: drop --json")
        print(list_tasks(args))
        return 0
    # Started by the state machine: heartbeats while running, then one callback (rlinf_aws.task_callback);
    # an error from here on (a bad request or suite included) is reported to it.
    with quiet_stdout(as_json), reporting_to_state_machine(TaskCallback.from_env()) as callback:
        request = load_request(args.request) if args.request else None  # read once
        job = job_from_args(args, build_run(args, request=request), sys.argv)
        out = job.out
        provenance = collect_provenance(gpus=NvmlGpus(), command=job.command)  # once per run
        # Bad arguments and finished episodes at --out are refused here, before the preflight's seconds.
        check_before_start(job, provenance)
        notice = None if callback is not None else long_run_notice(job.run)  # a person ran it: say how long
        if notice:
            print(notice, file=sys.stderr, flush=True)
        # Kubernetes stops a pod with SIGTERM: treat it like Ctrl-C so the result is written as incomplete.
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            result = run_job(job, provenance)
        except RlinfBenchError as exc:
            exc.add_note(
                f"result: {out}"
            )  # printed on the error's own line (rlinf_bench.reporting.text_safety.error_line)
            raise
        except KeyboardInterrupt as exc:
            exc.add_note(f"the finished episodes are in {out}: run the same command with --resume to finish it")
            raise
        finally:
            signal.signal(signal.SIGTERM, previous)
        report_run_result(callback, out, result)
    if as_json:
        print(f"{format_table(result)}\nresult: {out}", file=sys.stderr)
        emit_json(result.to_json())
        return 0
    print(format_table(result))
    print(f"result: {out}")
    return 0


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m eval_runner", default_suite: str = "") -> int:
    """``python -m eval_runner`` (and its alias ``python -m eval_runner.robotwin``, ``default_suite="robotwin"``)."""
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION, formatter_class=ExampleFormatter)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    add_arguments(parser)
    args = parser.parse_args(argv)
    if default_suite and not args.suite and not args.request:
        args.suite = default_suite
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return run(args)
    except (RlinfBenchError, ContractError, UsageError) as exc:  # AssetsMissingError included
        print(f"eval_runner: error: {error_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        why = error_line(exc)
        print("eval_runner: interrupted" + (f"; {why}" if why else ""), file=sys.stderr)
        return 130
