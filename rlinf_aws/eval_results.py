"""The eval runs of one checkpoint as the Aggregate state reads them: each result file checked on its own.

A result file that is missing, does not validate, or is not the run its outcome names (another suite,
run index, checkpoint, seed or trial count; settings that differ from its siblings') fails that run
only: a failed stand-in carries the reason, naming the file and the field, and the other runs are
still aggregated. The suite is then incomplete, and the report lists the failed run: it is never
averaged away, and one bad file never fails the whole checkpoint.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rlinf_bench.contracts import RunResult, RunStatus
from rlinf_bench.contracts.request import EvalRequest, EvalRun
from rlinf_bench.contracts.workflow import OutcomeStatus, RunOutcome
from rlinf_bench.document_store import Storage
from rlinf_bench.errors import ContractError, StorageError
from rlinf_bench.reporting.message_limits import ERROR_TEXT_MAX_CHARS, cut
from rlinf_bench.stats.aggregate import SourcedRun, load_run, settings_difference

__all__ = ["failure_line", "load_eval_runs", "read_outcome"]


def failure_line(outcome: RunOutcome) -> str:
    """``libero_goal run 1: OOMKilled: <cause>`` — what a person reads in the email and in Slack."""
    why = outcome.job_reason or outcome.error or "failed"
    cause = outcome.cause.strip().splitlines()[0] if outcome.cause.strip() else ""
    line = f"{outcome.label}: {why}" + (f": {cause}" if cause and cause != why else "")
    return cut(line, ERROR_TEXT_MAX_CHARS, rest_in="the execution history (the task's failure cause)")


def _expected_run(request: EvalRequest, outcome: RunOutcome) -> EvalRun | None:
    return next((r for r in request.expand() if (r.suite, r.run_index) == (outcome.suite, outcome.run_index)), None)


def _identity_mismatch(request: EvalRequest, outcome: RunOutcome, result: RunResult) -> str | None:
    """Why the file at ``outcome.result_uri`` is not the run the outcome names (None: it is)."""
    run = _expected_run(request, outcome)
    checks: list[tuple[str, object, object]] = [
        ("suite", outcome.suite, result.suite),
        ("run_index", outcome.run_index, result.run_index),
        (
            "checkpoint.uri",
            request.checkpoint.uri.rstrip("/"),
            result.checkpoint.uri.rstrip("/") if result.checkpoint else "",
        ),
        ("trials_per_task", request.trials_per_task, result.trials_per_task),
        ("policy", request.policy, result.policy),
    ]
    if run is not None:
        checks.append(("seed", run.seed, result.seed))
    for field, expected, found in checks:
        if expected != found:
            return (
                f"result {outcome.result_uri} is not {outcome.label}: field {field} is {found!r}, the request "
                f"expects {expected!r}; the file belongs to another run (re-run this one)"
            )
    return None


def _odd_settings(loaded: Sequence[tuple[RunOutcome, SourcedRun]]) -> dict[int, str]:
    """Position in ``loaded`` -> why its settings differ from the other runs of its suite (the settings most
    runs share are taken as the suite's)."""
    out: dict[int, str] = {}
    for suite in {s.result.suite for _, s in loaded}:
        members = [i for i, (_, s) in enumerate(loaded) if s.result.suite == suite]
        agree = Counter(
            i for i in members for j in members if settings_difference(loaded[i][1].result, loaded[j][1].result) is None
        )
        ref = max(members, key=lambda i: (agree[i], -loaded[i][1].result.run_index))
        for i in members:
            diff = settings_difference(loaded[ref][1].result, loaded[i][1].result)
            if diff is not None:
                o, ref_outcome = loaded[i][0], loaded[ref][0]
                out[i] = f"result {o.result_uri} does not match {ref_outcome.label}: {diff}"
    return out


def _failed_run(request: EvalRequest, outcome: RunOutcome, error: str, siblings: Sequence[RunResult]) -> RunResult:
    """A failed RunResult standing in for a run that produced none (same settings as its siblings)."""
    from rlinf_bench.suites import get_suite

    suite = outcome.suite or ""
    sibling = next((r for r in siblings if r.suite == suite), None)
    run_index = outcome.run_index or 0
    run = _expected_run(request, outcome)
    seed = run.seed if run is not None else run_index
    if sibling is not None:
        # Same settings as the runs that did finish (protocol, steps, policy): only the outcome differs.
        stand_in = sibling.model_copy(
            update={"run_index": run_index, "seed": seed, "status": RunStatus.FAILED, "error": error}
        )
        return stand_in.with_tasks([])
    if run is None:  # an outcome of a run the request does not list: its identity from the outcome
        run = EvalRun(
            request_id=request.request_id,
            checkpoint=request.checkpoint,
            suite=suite,
            run_index=run_index,
            seed=seed,
            trials_per_task=request.trials_per_task,
            policy=request.policy,
        )
    max_steps = run.max_steps or get_suite(suite).max_steps
    return RunResult.of_run(run, RunStatus.FAILED, error=error, max_steps=max_steps, settle_steps=0)


def read_outcome(request: EvalRequest, outcome: RunOutcome, storage: Storage) -> SourcedRun | str:
    """The outcome's run, or why it failed (a line naming the file and the field): its Job failed, its file
    is missing or invalid, or the file is another run's."""
    if outcome.status != OutcomeStatus.SUCCEEDED:
        return failure_line(outcome)
    try:
        run = load_run(outcome.result_uri, storage=storage)
    except (ContractError, StorageError) as exc:
        return f"result {outcome.result_uri} unusable: {exc}"
    return _identity_mismatch(request, outcome, run.result) or run


def load_eval_runs(
    request: EvalRequest, outcomes: Sequence[RunOutcome], storage: Storage
) -> tuple[list[SourcedRun], list[str]]:
    """Every eval outcome as a run to aggregate (a failed stand-in where its file is unusable), and one
    failure line per failed run."""
    loaded: list[tuple[RunOutcome, SourcedRun]] = []
    failed: list[tuple[RunOutcome, str]] = []
    seen: set[tuple[str | None, int | None]] = set()
    for o in outcomes:
        got = read_outcome(request, o, storage)
        if isinstance(got, str):
            failed.append((o, got))
        elif (o.suite, o.run_index) in seen:
            failed.append((o, f"result {o.result_uri}: {o.label} was reported twice; only the first counts"))
        else:
            loaded.append((o, got))
        seen.add((o.suite, o.run_index))
    odd = _odd_settings(loaded)
    failed += [(loaded[i][0], why) for i, why in sorted(odd.items())]
    kept = [run for i, (_, run) in enumerate(loaded) if i not in odd]
    results = [r.result for r in kept]
    stand_ins = [
        SourcedRun(o.result_uri or o.job_name, _failed_run(request, o, why, results))
        for o, why in failed
        if not why.endswith("only the first counts")
    ]
    return kept + stand_ins, [why if why.startswith(o.label) else f"{o.label}: {why}" for o, why in failed]
