"""Where rlinf-bench keeps what it can rebuild: the LIBERO config, downloaded checkpoints, the MLflow store
template."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_ENV", "default_cache_dir"]

#: Root of rlinf-bench's caches.
CACHE_ENV = "RLINF_BENCH_CACHE"


def default_cache_dir() -> Path:
    """``$RLINF_BENCH_CACHE`` or ``~/.cache/rlinf-bench``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "rlinf-bench"
