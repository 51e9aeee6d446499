"""Command line of the probes: ``python -m infra_probes <probe> ...`` and ``rlinf-bench probe <probe> ...``.

Exit status: 0 pass, 1 fail, 3 not_available. Bad input also ends in a written ProbeResult (verdict
fail, the reason naming the input and the fix) with status 1, never a traceback, because the caller
of a probe Job reads the result, not the log.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from infra_probes.common import now_iso, parse_target, run_probe
from infra_probes.progress import ProbeProgress
from rlinf_aws.s3_objects import S3Objects
from rlinf_aws.task_callback import TaskCallback, job_name_from_env
from rlinf_bench.contracts import ProbeName, ProbeResult, ProbeVerdict
from rlinf_bench.contracts.workflow import JobCallback
from rlinf_bench.document_store import Storage, is_s3, parse_s3
from rlinf_bench.errors import ConfigError, RlinfBenchError, StorageError
from rlinf_clikit.help_format import DefaultsOnceFormatter

#: One module per probe, named after it (infra_probes.<name>): add_arguments, settings_from_args, measure.
PROBES: dict[str, str] = {name.value: f"infra_probes.{name.value}" for name in ProbeName}
EXIT_CODES = {ProbeVerdict.PASS: 0, ProbeVerdict.FAIL: 1, ProbeVerdict.NOT_AVAILABLE: 3}

log = logging.getLogger("infra_probes")


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the ProbeResult as JSON on stdout")
    parser.add_argument("--out", help="also write the ProbeResult to this file (local path or s3://bucket/key)")
    parser.add_argument("--instance-type", help="EC2 instance type (default: $RLINF_BENCH_INSTANCE_TYPE or IMDS)")
    parser.add_argument("--target", help="judge against METRIC OP VALUE instead, e.g. 'busbw_gbps>=300'")


def add_probe_parsers(sub: Any) -> None:
    """One sub-parser per probe, each with the common options and its own."""
    for name, module_name in PROBES.items():
        module = importlib.import_module(module_name)
        doc = (module.__doc__ or "").strip().splitlines()[0]
        parser = sub.add_parser(name, help=doc, description=module.__doc__, formatter_class=DefaultsOnceFormatter)
        add_common(parser)
        module.add_arguments(parser)
        parser.set_defaults(probe=name)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m infra_probes", description=__doc__, formatter_class=DefaultsOnceFormatter
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="probe", metavar="PROBE", required=True)
    add_probe_parsers(sub)
    return parser


def probe_needs(args: argparse.Namespace) -> tuple[str, ...]:
    """The doctor checks this probe needs at start besides Python and the packages: the GPU only where it
    measures one (gpu live, nccl over NCCL, checkpoint_io on cuda), MLflow only where it reads it (throughput,
    gpu from a training run). A storage probe on a CPU box then logs no failed GPU check it never needed."""
    reads_mlflow = args.probe == "throughput" or bool(
        getattr(args, "run_id", None) or getattr(args, "experiment", None)
    )
    uses_gpu = {
        "gpu": not reads_mlflow,
        "nccl": getattr(args, "backend", "") == "nccl",
        "checkpoint_io": str(getattr(args, "device", "cpu")).startswith("cuda"),
    }.get(args.probe, False)
    return (*(["gpu"] if uses_gpu else []), *(["mlflow"] if reads_mlflow else []))


def execute(args: argparse.Namespace) -> ProbeResult:
    """Run the probe named by ``args.probe``; input errors become a ``fail`` result naming the input."""
    module = importlib.import_module(PROBES[args.probe])
    try:
        settings = module.settings_from_args(args)
        override = parse_target(args.target) if args.target else None
    except (ConfigError, ValueError) as exc:
        return ProbeResult(
            probe=args.probe, verdict=ProbeVerdict.FAIL, reason=f"bad input: {exc}", started_at=now_iso()
        )
    return run_probe(
        args.probe,
        settings.model_dump(),
        lambda: module.measure(settings),
        environment=lambda: module.environment(settings),
        target_override=override,
    )


def emit(result: ProbeResult, args: argparse.Namespace) -> None:
    """Print (JSON or a short summary) and write ``--out`` (a local file or an s3:// URI)."""
    if args.json:
        print(result.to_json())
    else:
        print(summary(result))
    if args.out:
        write_result(result, args.out)


def summary(result: ProbeResult) -> str:
    """A few human lines: verdict, reason, values."""
    lines = [f"{result.probe}: {result.verdict.value.upper()} - {result.reason}"]
    for name, value in result.values.items():
        lines.append(f"  {name:<22} {value.value:>12.4g} {value.unit}")
    return "\n".join(lines)


def write_result(result: ProbeResult, out: str, *, storage: Storage | None = None) -> None:
    """Write the result JSON to a local file or an s3:// URI (boto3, credentials from the usual chain)."""
    if is_s3(out):
        parse_s3(out, what="--out", need_key=True)
        try:
            import boto3  # noqa: F401  # the [aws] extra; say so instead of failing deep inside Storage
        except ImportError as exc:
            raise ConfigError(f"--out {out} needs boto3; pip install 'rlinf-bench[aws]' or write a local file") from exc
    try:
        (storage or Storage(S3Objects())).write_json(out, result.to_json())
    except StorageError as exc:
        raise ConfigError(f"--out {out} cannot be written ({exc}); pass a writable path or URI") from exc


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    return run(args)


def run(args: argparse.Namespace) -> int:
    """Execute, emit on the reporting rank, and map the verdict to an exit status."""
    # Environment checks first (recorded in the result): an unreachable MLflow fails in seconds, not after retries.
    from rlinf_doctor.preflight import probe_preflight, with_report

    callback = TaskCallback.from_env()  # set when the state machine started this Job
    doctor, failed = probe_preflight(
        args.probe, getattr(args, "tracking_uri", None), getattr(args, "experiment", None), needs=probe_needs(args)
    )
    # Progress on stderr from the rank that reports (every process of a single-process probe).
    progress = ProbeProgress(args.probe, enabled=os.environ.get("RANK", "0") == "0")
    with callback.heartbeats() if callback is not None else contextlib.nullcontext(), progress:
        result = failed or with_report(execute(args), doctor)
    if args.probe == "nccl":
        from infra_probes.nccl import is_reporting_rank

        if not is_reporting_rank():
            # Rank 0 writes the result; another rank only makes its own failure visible in its log.
            if result.verdict != ProbeVerdict.PASS:
                print(summary(result), file=sys.stderr)
            return EXIT_CODES[result.verdict]
    try:
        emit(result, args)
    except RlinfBenchError as exc:
        print(f"infra_probes {args.probe}: error: {exc}", file=sys.stderr)
        if callback is not None:
            callback.fail("ProbeResultNotWritten", f"probe {args.probe}: {exc}")
        return 2
    if callback is not None:
        # A fail or not_available verdict is still a result: the report shows it against its target.
        callback.succeed(
            JobCallback(
                kind="probe",
                job_name=job_name_from_env(),
                result_uri=args.out or "",
                headline=f"{args.probe}: {result.verdict.value}",
                probe=args.probe,
            )
        )
    return EXIT_CODES[result.verdict]
