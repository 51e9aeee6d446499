"""The compute backends the embedded default's commands know: its local executor, and every cluster
``rlinf_k8s`` reaches. The choice is made here, the one package that knows both."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

from rlinf_bench.errors import ConfigError
from rlinf_k8s.submitter import Submitter
from rlinf_k8s.submitter_factory import submitter_for as cluster_submitter_for
from rlinf_local.local_executor import LocalExecutor

__all__ = ["DEFAULT_LOCAL_DIR", "local_executor_for", "submitter_for"]

DEFAULT_LOCAL_DIR = Path(".rlinf-bench") / "jobs"


def local_executor_for(rest: str) -> LocalExecutor:
    """The LocalExecutor of ``local:DIR?parallel=N`` (``rest`` is what follows ``local:``)."""
    path, _, query = rest.partition("?")
    try:
        parallel = int(parse_qs(query).get("parallel", ["1"])[0])
    except ValueError as exc:
        raise ConfigError(f"compute 'local:{rest}': parallel must be an integer") from exc
    return LocalExecutor(Path(path) if path else DEFAULT_LOCAL_DIR, max_parallel=parallel)


def submitter_for(spec: str) -> Submitter:
    """The :class:`Submitter` of a COMPUTE string: ``local[:DIR][?parallel=N]`` here, a cluster through rlinf_k8s."""
    return cluster_submitter_for(spec, local=local_executor_for)
