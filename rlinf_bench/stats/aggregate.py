"""Turn the RunResults of one checkpoint into SuiteReports and a CheckpointReport.

Failed or interrupted runs are listed but kept out of every statistic, and the suite is marked
incomplete: averaging fewer runs silently would make a broken node look like a result.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from rlinf_bench import __version__
from rlinf_bench.contracts import (
    CheckpointReport,
    Disagreement,
    ProbeResult,
    RunResult,
    RunStatus,
    RunSummary,
    StateEpisode,
    StateOutcome,
    SuiteReport,
    TaskSummary,
)
from rlinf_bench.document_store import Storage
from rlinf_bench.documents import read_contract
from rlinf_bench.errors import ResultsMismatchError
from rlinf_bench.protocols import RunProtocol
from rlinf_bench.stats.failure_reasons import reasons_section
from rlinf_bench.stats.intervals import CLUSTERED_METHOD, clustered_interval, wilson
from rlinf_bench.stats.pertask import task_disagreements
from rlinf_bench.stats.robustness import CategoryOf, robustness_section
from rlinf_bench.stats.run_checks import check_run_result, computed_status, seed_repeats
from rlinf_bench.stats.significance import chi2_homogeneity, cochran_q

DISAGREEMENT_ALPHA = 0.01  # strict: a flag should mean "look at the nodes", not routine noise


@dataclass(frozen=True)
class SourcedRun:
    """A RunResult with the file or URI it came from, so errors can name it."""

    source: str
    result: RunResult


def _sample_std(values: Sequence[float]) -> float | None:
    return statistics.stdev(values) if len(values) >= 2 else None


def _fingerprint(r: RunResult) -> dict[str, object]:
    return {
        "checkpoint": r.checkpoint.uri.rstrip("/") if r.checkpoint else None,
        "policy": r.policy,
        "trials_per_task": r.trials_per_task,
        "max_steps": r.max_steps,
        "protocol": _protocol(r).model_dump(include={"settle_steps", "settle_gripper", "decoding"}),
        # Only complete runs are known to cover their whole task list.
        "tasks": sorted(t.task_id for t in r.tasks) if r.status == RunStatus.COMPLETE else None,
    }


def settings_difference(a: RunResult, b: RunResult) -> str | None:
    """The first setting in which two runs of one suite differ, as ``field X differs (a vs b)``; None when
    they can be aggregated together (same checkpoint, policy, trials, steps, protocol and, when both are
    complete, tasks)."""
    fa, fb = _fingerprint(a), _fingerprint(b)
    for field, value in fa.items():
        if field == "tasks" and (value is None or fb[field] is None):
            continue
        if fb[field] != value:
            return f"field {field} differs ({value!r} vs {fb[field]!r})"
    return None


def _check_consistent(runs: Sequence[SourcedRun]) -> None:
    """Refuse to aggregate runs of different checkpoints or settings; name the offending files."""
    first = runs[0]
    for other in runs[1:]:
        diff = settings_difference(first.result, other.result)
        if diff is not None:
            raise ResultsMismatchError(
                f"cannot aggregate {first.source} and {other.source}: {diff}; "
                "pass the results of one checkpoint and one configuration"
            )
    seen: dict[tuple[str, int], str] = {}
    for run in runs:
        key = (run.result.suite, run.result.run_index)
        if key in seen:
            raise ResultsMismatchError(
                f"{seen[key]} and {run.source} are both run {key[1]} of suite {key[0]}; pass each run once"
            )
        seen[key] = run.source


def _states(completed: Sequence[RunResult]) -> dict[tuple[int, int], list[int]]:
    """(task_id, init_state) -> outcomes (0/1), one per completed run that has the episode."""
    out: dict[tuple[int, int], list[int]] = defaultdict(list)
    for run in completed:
        for task in run.tasks:
            for ep in task.episodes:
                out[(task.task_id, ep.init_state)].append(int(ep.success))
    return dict(sorted(out.items()))


def _episodes(completed: Sequence[RunResult]) -> dict[tuple[int, int], list[StateEpisode]]:
    """(task_id, init_state) -> that state's episodes, one per completed run, by run index."""
    out: dict[tuple[int, int], list[StateEpisode]] = defaultdict(list)
    for run in sorted(completed, key=lambda r: r.run_index):
        for task in run.tasks:
            for ep in task.episodes:
                out[(task.task_id, ep.init_state)].append(
                    StateEpisode(
                        run_index=run.run_index,
                        seed=ep.seed,
                        success=ep.success,
                        steps=ep.steps,
                        retries=ep.retries,
                        video=ep.video,
                        error=ep.error,
                        failure_reason=ep.failure_reason,
                    )
                )
    return out


def _disagreement(completed: Sequence[RunResult], states: dict[tuple[int, int], list[int]]) -> Disagreement | None:
    if len(completed) < 2:
        return None
    r = len(completed)
    if all(len(v) == r for v in states.values()) and states:
        res = cochran_q(np.array(list(states.values())))
    else:
        res = chi2_homogeneity([x.successes for x in completed], [x.episodes for x in completed])
    return Disagreement(
        test=res.test,
        statistic=res.statistic,
        df=res.df,
        p_value=res.p_value,
        alpha=DISAGREEMENT_ALPHA,
        flagged=res.p_value < DISAGREEMENT_ALPHA,
    )


def _task_summaries(
    runs: Sequence[RunResult], completed: Sequence[RunResult], states: dict[tuple[int, int], list[int]]
) -> list[TaskSummary]:
    names: dict[int, str] = {}
    for run in runs:
        for t in run.tasks:
            names.setdefault(t.task_id, t.task_name)
    out = []
    for task_id in sorted(names):
        per_run: list[float | None] = []
        for run in runs:
            found = next((t for t in run.tasks if t.task_id == task_id), None)
            ok = run.status == RunStatus.COMPLETE and found is not None and found.episodes
            per_run.append(found.success_rate if ok and found is not None else None)
        done = [v for v in per_run if v is not None]
        clusters = [v for (tid, _), v in states.items() if tid == task_id]
        k = sum(sum(v) for v in clusters)
        n = sum(len(v) for v in clusters)
        if n == 0:
            continue
        w_low, w_high = wilson(k, n)
        ce = clustered_interval([sum(v) for v in clusters], [len(v) for v in clusters])
        out.append(
            TaskSummary(
                task_id=task_id,
                task_name=names[task_id],
                run_success_rates=per_run,
                success_rate_mean=statistics.fmean(done) if done else k / n,
                success_rate_std=_sample_std(done),
                episodes=n,
                successes=k,
                wilson95_low=w_low,
                wilson95_high=w_high,
                ci95_low=ce.low,
                ci95_high=ce.high,
            )
        )
    return out


def _suite_stats(completed: Sequence[RunResult], states: dict[tuple[int, int], list[int]]) -> dict[str, float | None]:
    """Mean/std over runs and both intervals; all None when no run completed (a zero would look like a result)."""
    out: dict[str, float | None] = dict.fromkeys(
        (
            "success_rate_mean",
            "success_rate_std",
            "wilson95_low",
            "wilson95_high",
            "ci95_low",
            "ci95_high",
            "design_effect",
        )
    )
    k = sum(sum(v) for v in states.values())
    n = sum(len(v) for v in states.values())
    if not n:
        return out
    ce = clustered_interval([sum(v) for v in states.values()], [len(v) for v in states.values()])
    w_low, w_high = wilson(k, n)
    out.update(
        success_rate_mean=statistics.fmean(r.success_rate for r in completed),
        success_rate_std=_sample_std([r.success_rate for r in completed]),
        wilson95_low=w_low,
        wilson95_high=w_high,
        ci95_low=ce.low,
        ci95_high=ce.high,
        design_effect=ce.design_effect,
    )
    return out


def _protocol(r: RunResult) -> RunProtocol:
    """The run's episode settings; results written before protocols were recorded ran OFT's defaults."""
    return r.protocol or RunProtocol(max_steps=r.max_steps, settle_steps=r.settle_steps)


def counted_runs(runs: Sequence[SourcedRun]) -> list[SourcedRun]:
    """The runs of one suite as they count: completeness computed (:func:`computed_status`), and a complete
    run whose seed an earlier complete run already used refused (failed, with the reason)."""
    checked = [SourcedRun(r.source, computed_status(r.result)) for r in runs]
    repeats = seed_repeats([r.result for r in checked if r.result.status == RunStatus.COMPLETE])
    out = []
    for r in checked:
        why = repeats.get(r.result.run_index) if r.result.status == RunStatus.COMPLETE else None
        if why is not None:
            r = SourcedRun(r.source, r.result.model_copy(update={"status": RunStatus.FAILED, "error": why}))
        out.append(r)
    return out


def aggregate_suite(
    runs: Sequence[SourcedRun], runs_expected: int, *, category_of: CategoryOf | None = None
) -> SuiteReport:
    """Aggregate the runs of one suite of one checkpoint (see docs/statistics.md for every field; robustness and
    failure reasons: docs/robustness.md). ``category_of`` names the published category of a robustness suite's
    task (default: the catalogue's).

    Completeness is computed, never read from ``status`` (:func:`counted_runs`)."""
    if not runs:
        raise ValueError("aggregate_suite needs at least one run")
    runs = counted_runs(runs)
    _check_consistent(runs)
    ordered = sorted(runs, key=lambda r: r.result.run_index)
    results = [r.result for r in ordered]
    completed = [r for r in results if r.status == RunStatus.COMPLETE and r.episodes > 0]
    summaries = [
        RunSummary(
            run_index=r.result.run_index,
            seed=r.result.seed,
            status=r.result.status,
            success_rate=r.result.success_rate if r.result.status == RunStatus.COMPLETE else None,
            episodes=r.result.episodes,
            error=r.result.error,
            source=r.source,
        )
        for r in ordered
    ]
    states = _states(completed)
    episodes = _episodes(completed)
    k = sum(sum(v) for v in states.values())
    n = sum(len(v) for v in states.values())
    provenance = {r.result.run_index: r.result.provenance for r in ordered}
    for summary in summaries:
        summary.provenance = provenance[summary.run_index]
    return SuiteReport(
        suite=results[0].suite,
        runs_expected=runs_expected,
        runs_completed=len(completed),
        complete=len(completed) >= runs_expected and len(completed) == len(results),
        trials_per_task=results[0].trials_per_task,
        runs=summaries,
        tasks=task_disagreements(_task_summaries(results, completed, states), completed, states),
        ci_method=CLUSTERED_METHOD,
        episodes=n,
        successes=k,
        clusters=len(states),
        disagreement=_disagreement(completed, states),
        protocol=_protocol(results[0]),
        episode_errors=sum(e.error is not None for r in completed for t in r.tasks for e in t.episodes),
        states=[
            StateOutcome(task_id=t, init_state=s, successes=sum(v), trials=len(v), episodes=episodes[(t, s)])
            for (t, s), v in states.items()
        ],
        robustness=robustness_section(completed, results[0].suite, category_of),
        failure_reasons=reasons_section(completed),
        **_suite_stats(completed, states),
    )


def aggregate_checkpoint(
    runs: Sequence[SourcedRun], *, runs_expected: int = 3, category_of: CategoryOf | None = None
) -> CheckpointReport:
    """Group runs by suite and aggregate each; all runs must belong to one checkpoint and policy.
    ``category_of``: :func:`aggregate_suite`'s."""
    if not runs:
        raise ResultsMismatchError("no RunResult files given; pass the run JSON files of one checkpoint")
    first = runs[0]
    uri = first.result.checkpoint.uri.rstrip("/") if first.result.checkpoint else ""
    for other in runs[1:]:
        other_uri = other.result.checkpoint.uri.rstrip("/") if other.result.checkpoint else ""
        if other_uri != uri:
            raise ResultsMismatchError(
                f"{first.source} is from checkpoint {uri or '(none)'} but {other.source} is from "
                f"{other_uri or '(none)'}; aggregate one checkpoint at a time"
            )
    by_suite: dict[str, list[SourcedRun]] = defaultdict(list)
    for run in runs:
        by_suite[run.result.suite].append(run)
    suites = [aggregate_suite(by_suite[name], runs_expected, category_of=category_of) for name in sorted(by_suite)]
    rates = [s.success_rate_mean for s in suites if s.success_rate_mean is not None]
    ckpt = first.result.checkpoint
    return CheckpointReport(
        request_id=first.result.request_id,
        checkpoint=ckpt,
        checkpoint_uri=uri,
        experiment=ckpt.experiment if ckpt else "",
        global_step=ckpt.global_step if ckpt else None,
        policy=first.result.policy,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        generator=f"rlinf-bench {__version__}",
        success_rate=statistics.fmean(rates) if len(rates) == len(suites) and rates else None,
        complete=all(s.complete for s in suites),
        suites=suites,
        sources=[r.source for r in runs],
    )


def load_run(uri: str, *, storage: Storage) -> SourcedRun:
    """One RunResult read and checked against its suite (:func:`check_run_result`).

    A missing or invalid document, an unknown suite, a task or initial state outside the suite raise
    ContractError naming the URI and the field.
    """
    result = read_contract(RunResult, uri, storage=storage)
    check_run_result(result, uri)
    return SourcedRun(uri, result)


def load_runs(uris: Sequence[str], *, storage: Storage | None = None) -> list[SourcedRun]:
    """Read RunResults from local paths or ``s3://`` URIs (``storage`` reaches S3; without it local paths only),
    as :func:`load_run`."""
    store = storage or Storage()
    return [load_run(str(u), storage=store) for u in uris]


def load_probes(uris: Sequence[str], *, storage: Storage | None = None) -> list[ProbeResult]:
    """Read ProbeResults from local paths or ``s3://`` URIs; errors name the URI like :func:`load_runs`."""
    store = storage or Storage()
    return [read_contract(ProbeResult, str(u), storage=store) for u in uris]
