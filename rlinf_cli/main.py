"""Entry point of ``rlinf-bench``.

Each subcommand lives in its own module and exposes ``register(subparsers)``; registration only
builds argparse parsers, so heavy dependencies are imported when a command runs, not when the CLI
starts. The core's commands are listed below. The Job packages (``eval_runner``: evaluate,
serve-policy; ``infra_probes``: probe) add theirs through the ``rlinf_bench.commands`` entry-point
group declared in pyproject.toml, so the core never imports them (``make lint`` checks this).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from rlinf_bench import __version__
from rlinf_bench.errors import RlinfBenchError
from rlinf_bench.log_safety import terminal_log_handler
from rlinf_bench.reporting.text_safety import error_line, plain
from rlinf_clikit.arguments import UsageError
from rlinf_clikit.help_format import readable_help

# Add a line here to add a core subcommand (another package: an entry point in COMMAND_GROUP).
COMMAND_MODULES: list[str] = [
    "rlinf_cli.schemas_command",  # schemas
    "rlinf_cli.compare_command",  # compare
    "rlinf_cli.baselines_command",  # baselines
    "rlinf_cli.report_command",  # report
    "rlinf_cli.trigger_command",  # trigger
    "rlinf_cli.backfill_command",  # backfill
    "rlinf_cli.replay_events_command",  # replay-events
    "rlinf_cli.render_jobs_command",  # render-jobs
    "rlinf_cli.doctor_command",  # doctor
]

#: Entry-point group through which other installed packages add subcommands: ``name = "module:register"``.
COMMAND_GROUP = "rlinf_bench.commands"

#: Commands in the order a user meets them (demo, pipeline, evaluate, compare, baselines, report, probe,
#: trigger, backfill, watch, status); any other registered command follows in registration order.
FLOW_ORDER: tuple[str, ...] = (
    "demo",
    "pipeline",
    "evaluate",
    "compare",
    "baselines",
    "report",
    "probe",
    "trigger",
    "backfill",
    "watch",
    "status",
)

DESCRIPTION = """\
rlinf-bench evaluates RLinf checkpoints on LIBERO with real rollouts (3 runs x 50 trials per task,
greedy), turns the runs into success rates with intervals and verdicts against baselines, publishes
them to MLflow and reports, probes the training cluster (GPU, NCCL, storage, checkpoint I/O,
throughput), and evaluates every new checkpoint automatically on AWS/Kubernetes."""

EPILOG = """\
a first session:
  rlinf-bench doctor                                        # is this machine ready? (fix for each problem)
  rlinf-bench evaluate runs/exp/checkpoints/global_step_400 --suite libero_spatial
  rlinf-bench compare results/*/libero_spatial/run*.json --baseline libero/openvla-oft-rlinf
  rlinf-bench report --tracking-uri sqlite:///mlflow.db --out report/

`rlinf-bench COMMAND --help` shows a command's options and an example."""

log = logging.getLogger("rlinf_bench")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rlinf-bench",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rlinf-bench {__version__}")
    _add_verbosity(parser, default=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    for register in plugin_commands():
        register(sub)
    for command_parser in sub.choices.values():
        # -v/-q after the subcommand too; SUPPRESS keeps a flag given before it.
        _add_verbosity(command_parser, default=argparse.SUPPRESS)
    readable_help(parser)  # docstrings used as descriptions: no reST markup, no doubled %, on every level
    # argparse lists commands in the order they were added; reorder the listing, not the discovery.
    sub._choices_actions.sort(key=lambda action: flow_rank(action.dest))
    return parser


def _add_verbosity(parser: argparse.ArgumentParser, *, default: Any) -> None:
    """``-v/--verbose`` and ``-q/--quiet`` on ``parser``, unless the command defines them itself."""
    taken = parser._option_string_actions
    if "-v" not in taken and "--verbose" not in taken:
        parser.add_argument("-v", "--verbose", action="store_true", default=default, help="debug logging")
    if "-q" not in taken and "--quiet" not in taken:
        parser.add_argument(
            "-q", "--quiet", action="store_true", default=default, help="warnings and errors only (logs go to stderr)"
        )


def log_level(args: argparse.Namespace) -> int:
    """DEBUG with -v, WARNING with -q (-v wins when both are given), else INFO."""
    if getattr(args, "verbose", False):
        return logging.DEBUG
    return logging.WARNING if getattr(args, "quiet", False) else logging.INFO


#: Libraries whose INFO lines say nothing a user acts on ("No OpenGL_accelerate module loaded"); -v shows them.
CHATTY_LOGGERS = ("OpenGL", "alembic", "mlflow.store.db.utils")


def quiet_third_parties(*, verbose: bool) -> None:
    """Warnings and errors only from :data:`CHATTY_LOGGERS` and no MLflow artifact progress bars, unless -v."""
    if verbose:
        return
    for name in CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")


def plugin_commands(group: str = COMMAND_GROUP) -> list[Callable[[Any], None]]:
    """The ``register`` functions of the commands other packages declare in ``group``, sorted by name.

    A command whose package cannot be imported (an extra not installed) is left out with a warning, so
    the other commands still work; ``pip install -e .`` after changing the entry points refreshes them.
    """
    found: list[Callable[[Any], None]] = []
    for entry in sorted(entry_points(group=group), key=lambda e: e.name):
        register = _load(entry)
        if register is not None:
            found.append(register)
    return found


def _load(entry: EntryPoint) -> Callable[[Any], None] | None:
    try:
        register = entry.load()
    except ImportError as exc:
        log.warning("rlinf-bench %s is unavailable: %s cannot be imported (%s)", entry.name, entry.value, exc)
        return None
    if not callable(register):
        log.warning("rlinf-bench %s: entry point %s is not a register(subparsers) function", entry.name, entry.value)
        return None
    return register


def flow_rank(command: str) -> int:
    """Position of ``command`` in --help: the flow's commands first, the rest after them."""
    return FLOW_ORDER.index(command) if command in FLOW_ORDER else len(FLOW_ORDER)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a reader that closed stdout early (``rlinf-bench compare --json | head``) ends it quietly."""
    try:
        try:
            rc = _run(argv)
        finally:  # --help and errors too: a closed pipe shows up here, not at interpreter exit
            sys.stdout.flush()
    except BrokenPipeError:
        return closed_pipe()
    return rc


def closed_pipe() -> int:
    """What Python's docs recommend on SIGPIPE: point stdout at devnull so the exit's flush cannot raise again.

    Exit status 1 as other tools in a pipeline whose reader went away (``head``); nothing is printed."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 1


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    given = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(given)
    args.command_line = given  # what the user typed, for messages that tell them to run it again
    # Log lines go to stderr, so stdout carries only results (--json output, tables).
    # Each line redacted and terminal-safe: log lines carry field text from result files (rlinf_bench.log_safety).
    logging.basicConfig(level=log_level(args), handlers=[terminal_log_handler(sys.stderr)])
    quiet_third_parties(verbose=log_level(args) == logging.DEBUG)
    try:
        rc = args.func(args)
    except (RlinfBenchError, UsageError) as exc:
        # Errors we raise on purpose already name the input and the fix: no traceback.
        # The message can quote a file's names or a Job's output: no escape sequence reaches the terminal.
        print(f"rlinf-bench {args.command}: error: {error_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        # A command that knows what to do next (evaluate: --resume) says so in a note.
        notes = "; ".join(str(n) for n in getattr(exc, "__notes__", ()))
        print(f"rlinf-bench {args.command}: interrupted" + (f"; {plain(notes)}" if notes else ""), file=sys.stderr)
        return 130
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main())
