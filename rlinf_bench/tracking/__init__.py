"""MLflow publishing and reading back (history for previous/best verdicts and reports)."""

from rlinf_bench.tracking.history import BRIEF_FILTER, load_history, search_checkpoint_runs
from rlinf_bench.tracking.publish import (
    DEFAULT_EXPERIMENT,
    LocalArtifacts,
    MlflowPublisher,
    publish_checkpoint,
    write_local_artifacts,
)
from rlinf_bench.tracking.retry import RetryPolicy, call_tracking, is_unreachable

__all__ = [
    "BRIEF_FILTER",
    "DEFAULT_EXPERIMENT",
    "LocalArtifacts",
    "MlflowPublisher",
    "RetryPolicy",
    "call_tracking",
    "is_unreachable",
    "load_history",
    "publish_checkpoint",
    "search_checkpoint_runs",
    "write_local_artifacts",
]
