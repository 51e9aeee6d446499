"""``rlinf-bench render-jobs``: write the Kubernetes manifests of an EvalRequest as YAML, for ``kubectl apply``."""

from __future__ import annotations

import argparse
from pathlib import Path

from rlinf_clikit.help_format import ExampleFormatter
from rlinf_clikit.output import add_json_flag, emit_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "render-jobs",
        help="write the Jobs (and Services) of an EvalRequest as YAML files",
        description="Validate an EvalRequest (YAML or JSON) and write one YAML file per Job into --out, "
        "ready for `kubectl apply -f DIR`. Nothing is sent to a cluster.",
        epilog="example: rlinf-bench render-jobs --request examples/eval-request.yaml --out jobs/",
        formatter_class=ExampleFormatter,
    )
    p.add_argument("--request", required=True, metavar="FILE", help="EvalRequest as YAML or JSON")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the manifests (created if missing)")
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra environment variable for every container (repeatable)",
    )
    add_json_flag(p, "{manifests: [paths in submit order]}")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rlinf_bench.errors import ConfigError
    from rlinf_k8s.render_manifests import load_request, write_manifests

    extra: dict[str, str] = {}
    for item in args.env:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ConfigError(f"--env {item!r} must look like NAME=VALUE")
        extra[name] = value
    request = load_request(Path(args.request))
    paths = write_manifests(request, Path(args.out), extra_env=extra)
    if args.json:
        emit_json({"manifests": [str(p) for p in paths]})
    else:
        for path in paths:
            print(path)
    return 0
