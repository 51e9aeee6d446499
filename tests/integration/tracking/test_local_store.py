"""A new local MLflow store is copied from a migrated template: the same database MLflow would have built."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from rlinf_tracking.local_store import prepare_sqlite_store


def _schema(db: Path) -> tuple[set[tuple[str, ...]], list[tuple[str, ...]]]:
    """Each table's and index's definition (its clauses in any order: MLflow's migrations write a table's
    constraints in an order that changes from one process to the next), and the migration head."""
    with sqlite3.connect(db) as con:
        tables = {
            tuple(sorted(line.strip().rstrip(",").strip() for line in row[0].splitlines()))
            for row in con.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")
        }
        version = con.execute("SELECT version_num FROM alembic_version").fetchall()
    return tables, version


def test_given_a_new_sqlite_uri_then_the_store_equals_one_mlflow_builds_and_opens_with_its_default_experiment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # MLflow puts a new store's Default experiment under the working folder
    cache = tmp_path / "cache"
    fresh, copied = tmp_path / "fresh" / "mlflow.db", tmp_path / "out" / "mlflow.db"
    fresh.parent.mkdir()
    fresh_client = MlflowClient(f"sqlite:///{fresh}")
    fresh_default = fresh_client.get_experiment("0")

    assert prepare_sqlite_store(f"sqlite:///{copied}", cache) is True
    assert _schema(copied) == _schema(fresh)  # every table, index and the migration head
    client = MlflowClient(f"sqlite:///{copied}")
    (default,) = client.search_experiments()
    assert (default.experiment_id, default.name) == ("0", "Default")
    assert default.artifact_location == fresh_default.artifact_location  # the opener's, not the template builder's
    run = client.create_run(client.create_experiment("RLinf"))
    client.log_metric(run.info.run_id, "success_rate", 0.5)
    assert client.get_run(run.info.run_id).data.metrics == {"success_rate": 0.5}

    template = next((cache / "mlflow-store").glob("mlflow-*.db"))
    built = template.stat().st_mtime_ns
    assert prepare_sqlite_store(f"sqlite:///{tmp_path / 'again' / 'mlflow.db'}", cache) is True
    assert template.stat().st_mtime_ns == built  # built once per MLflow version


def test_given_an_existing_store_or_another_uri_then_nothing_is_touched(tmp_path: Path) -> None:
    existing = tmp_path / "mlflow.db"
    existing.write_bytes(b"a user's store")
    assert prepare_sqlite_store(f"sqlite:///{existing}", tmp_path / "cache") is False
    assert existing.read_bytes() == b"a user's store"
    for uri in ("http://127.0.0.1:5000", "file:///tmp/mlruns", "sqlite:///:memory:", "databricks"):
        assert prepare_sqlite_store(uri, tmp_path / "cache") is False
    assert not (tmp_path / "cache").exists()  # no template built for nothing
