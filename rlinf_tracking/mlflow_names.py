"""MLflow names: params, metric keys and tags written by the publisher and read back by the report."""

from __future__ import annotations

import re

PARAM_VAL_ONLY = "val_only"  # the brief's query: params.val_only = 'True'
TAG_REQUEST = "rlinf_bench.request_id"
TAG_EXPERIMENT = "rlinf_bench.experiment"
TAG_KIND = "rlinf_bench.kind"  # "checkpoint" on parents, "eval_run" on children
TAG_VERDICT = "rlinf_bench.verdict"
TAG_COMPLETE = "rlinf_bench.complete"
TAG_DESCRIPTION = "mlflow.note.content"  # what the MLflow UI shows as the run's description
REPORT_ARTIFACT = "checkpoint_report.json"
MARKDOWN_ARTIFACT = "report.md"
PLOT_ARTIFACT = "sr_vs_step.png"

_BAD = re.compile(r"[^A-Za-z0-9_\-. /]")


def metric_key(*parts: str) -> str:
    """Join parts with '/', replacing characters MLflow refuses in keys; keys stay under 250 chars."""
    return "/".join(_BAD.sub("_", p) for p in parts)[:250]
