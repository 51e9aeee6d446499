"""A new local MLflow store (``sqlite:///FILE``) copied from a migrated, empty template.

MLflow builds a new SQLite store by running every schema migration since its first release, which takes
5-20 s on the 2-core machine (longer than importing MLflow), and every fresh ``--out`` folder paid it. The
template is built once per MLflow version under the cache folder (the same migrations, run once), with its
experiments removed, so MLflow creates its ``Default`` experiment on first use exactly as in a new store
(its artifact location follows the process that opens it, not the one that built the template).
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from rlinf_bench.cache import default_cache_dir

__all__ = ["prepare_sqlite_store", "sqlite_store_path"]

log = logging.getLogger(__name__)

SQLITE_PREFIX = "sqlite:///"


def sqlite_store_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` tracking URI; None for any other URI (or an in-memory one)."""
    if not uri.startswith(SQLITE_PREFIX):
        return None
    path = uri[len(SQLITE_PREFIX) :].split("?", 1)[0]
    return Path(path) if path and path != ":memory:" else None


def prepare_sqlite_store(uri: str, cache_dir: Path | None = None) -> bool:
    """Create ``uri``'s database from the template when it does not exist yet; True when it was created.

    Any other URI, or a database that exists, is left alone (MLflow upgrades an old one itself)."""
    path = sqlite_store_path(uri)
    if path is None or path.exists():
        return False
    template = _template(cache_dir or default_cache_dir())
    path.parent.mkdir(parents=True, exist_ok=True)
    _copy_atomically(template, path)
    log.debug("MLflow store %s created from %s", path, template)
    return True


def _template(cache_dir: Path) -> Path:
    import mlflow

    template = cache_dir / "mlflow-store" / f"mlflow-{mlflow.__version__}.db"
    if template.exists():
        return template
    template.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=template.parent) as scratch:
        built = Path(scratch) / "store.db"
        from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

        store = SqlAlchemyStore(f"{SQLITE_PREFIX}{built}", str(Path(scratch) / "artifacts"))
        store.engine.dispose()
        with sqlite3.connect(built) as db:  # the Default experiment is created again by whoever opens a copy
            db.execute("DELETE FROM experiment_tags")
            db.execute("DELETE FROM experiments")
        _copy_atomically(built, template)
    return template


def _copy_atomically(source: Path, target: Path) -> None:
    # Two processes may create the same file at once: each writes its own temporary copy, the last rename wins,
    # and a reader never sees half a database.
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        os.close(fd)
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
