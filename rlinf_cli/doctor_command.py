"""``rlinf-bench doctor``: check this environment for a target before a run finds the problem.

Each check says pass / warn / fail / skip, what it measured, and the fix. Exit status 0 when nothing
failed (warnings allowed), 1 when a check failed. Eval and probe Jobs run the relevant checks at start.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

EXAMPLE = """example:
  rlinf-bench doctor                                   # this machine, for local use
  rlinf-bench doctor --for eval --policy server:ws://127.0.0.1:8000 --json
  rlinf-bench doctor --for deploy --eks my-cluster --region us-east-1 --stack rlinf-bench
"""


def register(sub: Any) -> None:
    """Add ``doctor`` to ``rlinf-bench``."""
    p = sub.add_parser(
        "doctor",
        help="check this environment (LIBERO, rendering, GPU, cluster, MLflow) and print the fix for each problem",
        description=__doc__,
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--for",
        dest="target",
        choices=["local", "eval", "probe", "deploy"],
        default="local",
        help="what the environment must be ready for (default local: problems of cluster, AWS and GPU only warn)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--only", action="append", default=[], metavar="CHECK", help="only this area or check (repeatable)")
    p.add_argument("--quick", action="store_true", help="skip building a LIBERO env (5-40 s on a CPU)")
    p.add_argument(
        "--policy", action="append", default=[], metavar="SPEC", help="policy spec, e.g. server:ws://HOST:PORT"
    )
    p.add_argument("--request", metavar="FILE", help="EvalRun/EvalRequest JSON or YAML: check its policy server")
    p.add_argument(
        "--policy-wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="keep trying to reach a policy server this long (one that is still starting); default 0",
    )
    p.add_argument("--tracking-uri", default="", help="MLflow tracking URI (default $MLFLOW_TRACKING_URI)")
    p.add_argument("--experiment", default="RLinf", help="MLflow experiment (default RLinf)")
    p.add_argument("--kubeconfig", default="", help="kubeconfig path (default $KUBECONFIG or ~/.kube/config)")
    p.add_argument("--kube-context", default="", help="kubeconfig context (default: its current-context)")
    p.add_argument("--eks", default="", metavar="CLUSTER", help="reach this EKS cluster through IAM instead")
    p.add_argument("--namespace", default="rlinf-eval", help="namespace of the Jobs (default rlinf-eval)")
    p.add_argument("--region", default="", help="AWS region (default: the AWS SDK's)")
    p.add_argument("--stack", default="", help="CloudFormation stack of the intake (default $RLINF_BENCH_STACK)")
    p.add_argument("--timeout", type=float, default=5.0, metavar="SECONDS", help="per network call (default 5)")
    p.set_defaults(func=run)


def _servers(specs: list[str], request: str | None) -> list[str]:
    from rlinf_doctor.preflight import policy_servers

    out: list[str] = []
    for spec in specs:
        out += policy_servers(spec) or ([spec] if "://" in spec else [])
    if request:
        out += policy_servers(_request_policy(request))
    return out


def _request_policy(path: str) -> str:
    from pathlib import Path

    import yaml

    from rlinf_bench.errors import ConfigError

    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"--request {path}: cannot read it ({exc}); pass an EvalRun or EvalRequest file") from exc
    return str((doc or {}).get("policy", "")) if isinstance(doc, dict) else ""


def run(args: argparse.Namespace) -> int:
    """Run the checks of ``--for`` and print the report; 1 when a check failed."""
    from rlinf_bench.doctor import DoctorContext, Target
    from rlinf_doctor.check_runner import check_selectors, run_doctor

    check_selectors(args.only)
    ctx = DoctorContext(
        target=Target(args.target),
        only=args.only,
        quick=args.quick,
        policy_servers=_servers(args.policy, args.request),
        policy_wait_s=args.policy_wait,
        tracking_uri=args.tracking_uri,
        experiment=args.experiment,
        kubeconfig=args.kubeconfig,
        kube_context=args.kube_context,
        eks_cluster=args.eks,
        namespace=args.namespace,
        region=args.region,
        stack_name=args.stack,
        timeout_s=args.timeout,
    )
    report = run_doctor(ctx)
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), indent=2))
    else:
        from rlinf_bench.reporting.text_safety import plain

        print(plain(report.to_text(), multiline=True))  # versions, paths and errors read from the machine
    sys.stdout.flush()
    return 0 if report.ok else 1
