"""The CheckpointReports published to MLflow (each parent run's ``checkpoint_report.json``), brought up to today's
shape once, in place: the MLflow side of ``rlinf-bench migrate-results`` (:mod:`rlinf_bench.document_migration`).

Previous and best are read back from these reports, so a report of an earlier shape left in MLflow would stop
every later verdict against it; the migration rewrites the artifact where it is, and leaves current ones alone.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

from rlinf_bench.document_migration import MigratedFile, migrate_stored, run_reader
from rlinf_bench.document_store import Storage
from rlinf_bench.retry import RetryPolicy
from rlinf_tracking import mlflow_names as names
from rlinf_tracking.mlflow_history import search_checkpoint_runs
from rlinf_tracking.tracking_retry import call_tracking

__all__ = ["migrate_published_reports"]


def migrate_published_reports(
    client: Any, experiment: str, *, storage: Storage, dry_run: bool = False, retry: RetryPolicy | None = None
) -> list[MigratedFile]:
    """Every checkpoint report of MLflow ``experiment``, each re-uploaded in today's shape where it was not
    (``dry_run``: only said); ``storage`` reads the RunResults a report's per-run rows are rebuilt from."""
    policy = retry or RetryPolicy()
    target = str(client.tracking_uri)
    out: list[MigratedFile] = []
    with tempfile.TemporaryDirectory(prefix="rlinf-bench-migrate-") as tmp:
        for run in search_checkpoint_runs(client, experiment, retry=policy):
            rid = run.info.run_id
            dst = Path(tmp) / rid
            dst.mkdir()
            download = functools.partial(client.download_artifacts, rid, names.REPORT_ARTIFACT, str(dst))
            local = Path(
                call_tracking(download, what=f"download the report of run {rid}", target=target, policy=policy)
            )

            def write(text: str, local: Path = local, rid: str = rid) -> None:
                local.write_text(text)
                upload = functools.partial(client.log_artifact, rid, str(local))
                call_tracking(upload, what=f"upload the migrated report of run {rid}", target=target, policy=policy)

            where = f"mlflow run {rid} ({names.REPORT_ARTIFACT})"
            looked = migrate_stored(
                local.read_bytes(), where=where, read_run=run_reader(storage), write=None if dry_run else write
            )
            if looked is not None:
                out.append(looked)
    return out
