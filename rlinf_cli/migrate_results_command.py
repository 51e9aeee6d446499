"""``rlinf-bench migrate-results ROOT``: rewrite stored results, reports and run requests of earlier shapes into
today's, once (:mod:`rlinf_bench.document_migration` lists the shapes)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import TYPE_CHECKING

from rlinf_clikit.help_format import ExampleFormatter
from rlinf_clikit.output import add_json_flag, emit_json

if TYPE_CHECKING:
    from rlinf_bench.document_migration import MigratedFile
    from rlinf_bench.document_store import Storage


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "migrate-results",
        help="rewrite stored results and reports of earlier versions in today's shape",
        description="Walk ROOT (a folder or s3://bucket/prefix) for RunResults, EvalRuns and CheckpointReports "
        "written by an earlier rlinf-bench and rewrite each in today's shape, in place; with --experiment, the "
        "checkpoint reports published to that MLflow experiment too (previous and best are read back from them). "
        "Documents already current are left untouched, so running it again changes nothing. A document that "
        "cannot be migrated is named with the reason and left as it was (exit 1).",
        epilog="example: rlinf-bench migrate-results s3://my-bucket/results --experiment RLinf --dry-run",
        formatter_class=ExampleFormatter,
    )
    p.add_argument("root", metavar="ROOT", nargs="?", help="results folder or s3://bucket/prefix")
    p.add_argument("--experiment", default=None, help="also the reports published to this MLflow experiment")
    p.add_argument("--tracking-uri", default=None, help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI)")
    p.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")
    add_json_flag(p, "{files: [{uri, kind, changes, error}]} for every document that needed a change or failed")
    p.set_defaults(func=run)


def _published(args: argparse.Namespace, storage: Storage) -> list[MigratedFile]:
    from rlinf_bench.errors import ConfigError

    uri = args.tracking_uri or os.environ.get("MLFLOW_TRACKING_URI")
    if not uri:
        raise ConfigError("--experiment needs a tracking server: pass --tracking-uri URI or set MLFLOW_TRACKING_URI")
    from mlflow.tracking import MlflowClient

    from rlinf_tracking.mlflow_migration import migrate_published_reports

    return migrate_published_reports(MlflowClient(uri), args.experiment, storage=storage, dry_run=args.dry_run)


def run(args: argparse.Namespace) -> int:
    from rlinf_bench.document_migration import migrate_tree
    from rlinf_cli.compare_command import result_storage
    from rlinf_clikit.arguments import UsageError

    if not args.root and not args.experiment:
        raise UsageError("migrate-results: give ROOT (a results folder or s3://bucket/prefix), --experiment, or both")
    storage = result_storage()
    looked = migrate_tree(args.root, storage, dry_run=args.dry_run) if args.root else []
    looked += _published(args, storage) if args.experiment else []
    touched = [f for f in looked if f.changes or f.error]
    failed = [f for f in touched if f.error]
    if args.json:
        emit_json({"files": [dataclasses.asdict(f) for f in touched]})
    else:
        verb = "would migrate" if args.dry_run else "migrated"
        for f in touched:
            if f.error:
                print(f"not migrated: {f.uri}: {f.error}", file=sys.stderr)
            else:
                print(f"{verb} {f.kind} {f.uri}: {'; '.join(f.changes)}")
        current = len(looked) - len(touched)
        print(f"{len(touched) - len(failed)} {verb}, {current} already current, {len(failed)} not migrated")
    return 1 if failed else 0
