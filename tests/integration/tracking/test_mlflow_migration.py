"""Checkpoint reports of an earlier shape published to a real MLflow store (sqlite) are rewritten in place by
``rlinf-bench migrate-results --experiment``, after which previous and best read back again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rlinf_bench.document_store import Storage
from rlinf_bench.errors import ContractError
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_cli.main import main
from rlinf_tracking import load_history, publish_checkpoint
from rlinf_tracking.mlflow_migration import migrate_published_reports
from tests.unit.stats.runfactory import checkpoint, make_run


def _published_without_protocol(tmp_path: Path) -> tuple[Any, str]:
    """A checkpoint published today, whose report artifact is then put back as an earlier version wrote it."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{tmp_path}/mlflow.db")
    client.create_experiment("RLinf", artifact_location=str(tmp_path / "artifacts"))
    run = make_run({0: [1, 0, 1]}, ckpt=checkpoint(100), protocol="oft")
    report = aggregate_checkpoint([SourcedRun("run0.json", run)], runs_expected=1)
    rid = publish_checkpoint(report, client=client, out_dir=tmp_path / "out")
    aged = json.loads(report.to_json())
    aged["suites"][0].pop("protocol")
    old = tmp_path / "old" / "checkpoint_report.json"
    old.parent.mkdir()
    old.write_text(json.dumps(aged))
    client.log_artifact(rid, str(old))
    return client, rid


def test_an_earlier_report_in_mlflow_is_migrated_in_place_and_history_reads_again(tmp_path: Path) -> None:
    client, rid = _published_without_protocol(tmp_path)
    with pytest.raises(ContractError, match="protocol"):
        load_history(client, "RLinf")

    dry = migrate_published_reports(client, "RLinf", storage=Storage(), dry_run=True)
    with pytest.raises(ContractError):
        load_history(client, "RLinf")
    (looked,) = migrate_published_reports(client, "RLinf", storage=Storage())
    again = migrate_published_reports(client, "RLinf", storage=Storage())

    assert [f.changes for f in dry] == [looked.changes] and rid in looked.uri
    assert looked.changes == ("suites[0].protocol = OpenVLA-OFT's defaults (max_steps 220, settle 10)",)
    (report,) = load_history(client, "RLinf")
    assert report.suites[0].protocol.name == "oft"
    assert [f.changes for f in again] == [()]


def test_the_command_migrates_an_experiment_without_a_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    client, _ = _published_without_protocol(tmp_path)

    rc = main(["migrate-results", "--experiment", "RLinf", "--tracking-uri", f"sqlite:///{tmp_path}/mlflow.db"])

    assert rc == 0 and "migrated CheckpointReport mlflow run" in capsys.readouterr().out
    assert load_history(client, "RLinf")[0].suites[0].protocol.name == "oft"
