"""``rlinf-bench probe <probe> ...``: the infrastructure probes (same options as ``python -m infra_probes``).

Registered with the core CLI through the ``rlinf_bench.commands`` entry-point group (pyproject.toml),
so the core package never imports this one.
"""

from __future__ import annotations

import argparse
from typing import Any

from rlinf_bench.contracts import ProbeName
from rlinf_clikit.help_format import ExampleFormatter


def register(sub: Any) -> None:
    """Add ``probe`` with one sub-command per probe; probe modules import heavy packages only when run."""
    from infra_probes.probe_cli import add_probe_parsers

    parser = sub.add_parser(
        "probe",
        help=f"run an infrastructure probe ({', '.join(ProbeName)})",
        description="Measure one property of the training cluster and judge it against its target (the brief's, "
        "or --target): GPU utilization, NCCL all-reduce bandwidth, storage throughput, checkpoint save/load time, "
        "training throughput from MLflow, or a simulator canary. Each writes a ProbeResult (pass, fail or "
        "not_available, with the measured values and units); exit status 0 pass, 1 fail, 3 not available. "
        "`rlinf-bench probe PROBE --help` lists a probe's options.",
        epilog="example: rlinf-bench probe storage --path /fsx/bench --size 4G --json",
        formatter_class=ExampleFormatter,
    )
    probes = parser.add_subparsers(dest="probe", metavar="PROBE", required=True)
    add_probe_parsers(probes)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from infra_probes.probe_cli import run as run_probe

    return run_probe(args)
