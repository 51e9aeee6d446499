"""MLflow publishing and reading back (history for previous/best verdicts and reports)."""

from rlinf_tracking.mlflow_history import BRIEF_FILTER, load_history, search_checkpoint_runs
from rlinf_tracking.mlflow_publish import (
    DEFAULT_EXPERIMENT,
    LocalArtifacts,
    MlflowPublisher,
    publish_checkpoint,
    write_local_artifacts,
)
from rlinf_tracking.tracking_retry import RetryPolicy, call_tracking, is_unreachable

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
