"""The result-path layout: where one checkpoint's documents are stored. Every writer and reader calls these.

::

    <output_prefix>/<request_id>/m<digest>/<suite>/run<k>.json    one eval run's RunResult
    <output_prefix>/<request_id>/m<digest>/<suite>/run<k>.shard<i>of<n>.json    shard i of n of a sharded run
    <output_prefix>/<request_id>/m<digest>/probes/<probe>.json    one probe's ProbeResult
    <output_prefix>/<request_id>/m<digest>/report/                the CheckpointReport, report.md, the plot, the site

``m<digest>`` is the eval matrix's digest (:meth:`EvalMatrix.digest`), so attempts of one matrix share a
root (a re-run keeps the runs that finished) and another matrix never overwrites it. A request laid out
without a digest (``rlinf-bench submit`` without the workflow, a local ``evaluate``) drops that segment.
Roots are local paths or ``s3://`` URIs alike.
"""

from __future__ import annotations

__all__ = [
    "ENTRY_PAGE",
    "REPORT_FILES",
    "REPORT_JSON",
    "join_uri",
    "probe_result_uri",
    "report_prefix",
    "result_root",
    "run_result_uri",
    "shard_result_uri",
]

REPORT_JSON = "checkpoint_report.json"
#: The report files stored under :func:`report_prefix` (and published to MLflow as they are).
REPORT_FILES = (REPORT_JSON, "report.md", "sr_vs_step.png")
#: The report site's one entry page (under ``report/site/``): what commands print and messages link.
ENTRY_PAGE = "report.html"


def join_uri(base: str, *parts: str) -> str:
    """``base/part/...`` for a local path or an S3 URI: no doubled slashes, empty parts skipped."""
    return "/".join([base.rstrip("/"), *(p.strip("/") for p in parts if p)])


def result_root(output_prefix: str, request_id: str, digest: str | None = None) -> str:
    """The folder of one checkpoint's results for one eval matrix (``digest``; None: no matrix segment)."""
    return join_uri(output_prefix, request_id, f"m{digest}" if digest else "")


def run_result_uri(root: str, suite: str, run_index: int) -> str:
    """Where the RunResult of run ``run_index`` of ``suite`` goes under a result root."""
    return join_uri(root, suite, f"run{run_index}.json")


def shard_result_uri(root: str, suite: str, run_index: int, shard: int, shards: int) -> str:
    """Where shard ``shard`` (0-based) of ``shards`` of a run writes its RunResult: next to the run's own
    file, which the aggregator writes from the merged shards (``run<k>.shard<i>of<n>.json``, 1-based)."""
    return join_uri(root, suite, f"run{run_index}.shard{shard + 1}of{shards}.json")


def probe_result_uri(root: str, probe: str) -> str:
    """Where the ProbeResult of ``probe`` goes under a result root."""
    return join_uri(root, "probes", f"{probe}.json")


def report_prefix(root: str) -> str:
    """Where the report files of one checkpoint and matrix go under a result root."""
    return join_uri(root, "report")
