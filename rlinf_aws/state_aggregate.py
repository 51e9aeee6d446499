"""The aggregate state: the Map outcomes -> one CheckpointReport with verdicts, stored next to the results.

A failed run enters the report as failed, with its reason, and its suite's verdicts are ``incomplete``:
it is never averaged away. A result file that is missing, does not validate or is another run's makes
that run failed, naming the URI and the field (:mod:`rlinf_aws.eval_results`); the other runs are
still aggregated. The shards of a sharded run are merged into the run first (:mod:`rlinf_aws.shard_results`):
a missing or failed shard leaves that run incomplete, never a smaller complete one. When no eval run produced a result there is nothing honest to publish:
:class:`AllRunsFailedError` sends the execution to the failure branch.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rlinf_aws.eval_results import failure_line, load_eval_runs
from rlinf_aws.shard_results import merge_shard_outcomes
from rlinf_bench.contracts import CheckpointReport, ProbeResult, ProbeVerdict, RunStatus
from rlinf_bench.contracts.layout import report_prefix
from rlinf_bench.contracts.request import REFERENCE_BASELINES, EvalRequest
from rlinf_bench.contracts.workflow import AggregateInput, AggregateResult, OutcomeStatus, RunOutcome
from rlinf_bench.document_store import Storage, join
from rlinf_bench.documents import read_contract
from rlinf_bench.errors import ContractError, RlinfBenchError, StorageError, TrackingUnavailableError
from rlinf_bench.reporting.format import headline
from rlinf_bench.reporting.message_limits import (
    ERROR_TEXT_MAX_CHARS,
    SFN_STATE_OUTPUT_MAX_BYTES,
    bounded_lines,
    cut,
    utf8_len,
)
from rlinf_bench.stats.aggregate import aggregate_checkpoint

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

log = logging.getLogger(__name__)

__all__ = ["AllRunsFailedError", "aggregate", "failure_line", "fit_state_output", "report_prefix"]


class AllRunsFailedError(RlinfBenchError):
    """Every eval run of the checkpoint failed: no verdict can be given."""


def _load_probes(outcomes: Sequence[RunOutcome], storage: Storage) -> tuple[list[ProbeResult], list[str]]:
    probes: list[ProbeResult] = []
    failures: list[str] = []
    for o in outcomes:
        why = failure_line(o)
        if o.status == OutcomeStatus.SUCCEEDED:
            try:
                probes.append(read_contract(ProbeResult, o.result_uri, storage=storage))
                continue
            except (ContractError, StorageError) as exc:
                why = f"{o.label}: result {o.result_uri} unusable: {exc}"
        failures.append(why)
        probes.append(ProbeResult(probe=o.probe or "?", verdict=ProbeVerdict.FAIL, reason=f"the Job failed: {why}"))
    return probes, failures


def _apply_verdicts(
    report: CheckpointReport,
    request: EvalRequest,
    mlflow: Callable[[], MlflowClient] | None,
    experiment: str,
) -> tuple[list[CheckpointReport], list[str]]:
    """Verdicts vs the baselines, and vs previous/best read back from MLflow (when it can be reached)."""
    from rlinf_bench.baselines import get_baselines
    from rlinf_bench.stats.verdicts import apply_verdicts

    baselines = get_baselines([b for b in request.baselines if b not in REFERENCE_BASELINES])
    wants_history = any(b in REFERENCE_BASELINES for b in request.baselines)
    history: list[CheckpointReport] = []
    notes: list[str] = []
    if wants_history and mlflow is not None:
        from rlinf_tracking.mlflow_history import load_history

        try:
            history = load_history(mlflow(), experiment, training_experiment=report.experiment or None)
        except TrackingUnavailableError as exc:
            notes.append(f"verdicts vs previous/best missing: MLflow history unavailable ({exc})")
    elif wants_history:
        notes.append("verdicts vs previous/best missing: no MLflow tracking URI configured")
    apply_verdicts(report, baselines, history)
    return history, notes


def aggregate(
    inp: AggregateInput,
    *,
    storage: Storage,
    mlflow: Callable[[], MlflowClient] | None = None,
    experiment: str = "RLinf",
) -> AggregateResult:
    """Read every outcome's result, aggregate, decide verdicts, and store the report files."""
    request = inp.request
    outcomes = inp.flat()
    # A sharded run's shards become one run here (its merged file where an unsharded run writes it).
    eval_outcomes, shard_failures = merge_shard_outcomes(
        request, inp.eval_items, [o for o in outcomes if o.kind == "eval"], storage
    )
    runs, failed = load_eval_runs(request, eval_outcomes, storage)
    failed = shard_failures + failed
    probes, probe_failures = _load_probes([o for o in outcomes if o.kind == "probe"], storage)
    if eval_outcomes and all(r.result.status == RunStatus.FAILED for r in runs):
        raise AllRunsFailedError(
            f"all {len(eval_outcomes)} eval runs of {request.checkpoint.uri} failed; no verdict is published. "
            + cut("; ".join(failed), 4 * ERROR_TEXT_MAX_CHARS, rest_in=f"the result files under {inp.result_root}")
        )
    if not runs:
        raise AllRunsFailedError(f"the request for {request.checkpoint.uri} produced no eval run to report on")
    from rlinf_bench.reporting.infra_rows import infra_checks

    report = aggregate_checkpoint(runs, runs_expected=request.runs)
    report.request_id = request.request_id
    report.origin = request.origin  # a verdict's fix names the lever of whoever started the request
    report.probes = probes
    report.infra = infra_checks(probes)
    history, notes = _apply_verdicts(report, request, mlflow, experiment)
    report_uri = _store_report(report, history, request, inp.result_root, storage)
    result = AggregateResult(
        request=request,
        execution=inp.execution,
        result_root=inp.result_root,
        report_uri=report_uri,
        headline=cut(headline(report), ERROR_TEXT_MAX_CHARS),
        complete=report.complete,
        failed_runs=failed + probe_failures,
        notes=notes,
    )
    return fit_state_output(result)


# The failure lines and notes may take this much of the state's output; the request takes the rest.
_LINES_SHARE = 0.25


def fit_state_output(result: AggregateResult) -> AggregateResult:
    """The Aggregate state's output under Step Functions' 256 KiB: failure lines and notes are cut (each
    at ERROR_TEXT_MAX_CHARS, together at a share of the limit) with a pointer to the stored report, which
    holds every failure in full."""
    for share in (_LINES_SHARE, _LINES_SHARE / 8, 0.0):
        budget = int(SFN_STATE_OUTPUT_MAX_BYTES * share)
        fitted = result.model_copy(
            update={
                "failed_runs": bounded_lines(
                    result.failed_runs, max_bytes=budget, line_chars=ERROR_TEXT_MAX_CHARS, rest_in=result.report_uri
                ),
                "notes": bounded_lines(
                    result.notes, max_bytes=budget // 4, line_chars=ERROR_TEXT_MAX_CHARS, rest_in=result.report_uri
                ),
            }
        )
        if utf8_len(fitted.model_dump_json()) <= SFN_STATE_OUTPUT_MAX_BYTES:
            return fitted
    raise RlinfBenchError(
        f"the Aggregate state's output for {result.request.checkpoint.uri} exceeds Step Functions' "
        f"{SFN_STATE_OUTPUT_MAX_BYTES} bytes even without failure lines (the request itself is too big); "
        f"the report is stored at {result.report_uri}"
    )


def _store_report(
    report: CheckpointReport,
    history: Sequence[CheckpointReport],
    request: EvalRequest,
    root: str,
    storage: Storage,
) -> str:
    """Write the report JSON, markdown and plot under the results prefix; returns the JSON's URI."""
    from rlinf_bench.baselines import get_baselines
    from rlinf_tracking.mlflow_publish import write_local_artifacts

    prefix = report_prefix(root)
    report.links["results"] = root
    baselines = get_baselines([b for b in request.baselines if b not in REFERENCE_BASELINES])
    from rlinf_bench.reporting.site import upload_site  # issue 14: the browsable site, linked from MLflow/Slack

    report.links["report_site"] = upload_site(
        report, history, join(prefix, "site"), storage, baselines=baselines, results_root=root
    )
    with tempfile.TemporaryDirectory(prefix="rlinf-bench-report-") as tmp:
        files = write_local_artifacts(
            report, Path(tmp), history=history, baselines=baselines
        )  # no videos: not published here
        report.links["report_json"] = join(prefix, files.report_json.name)
        report.save(files.report_json)
        for path in (files.report_json, files.markdown, files.plot_png):
            storage.write_bytes(join(prefix, path.name), path.read_bytes())
    return report.links["report_json"]
