"""Sharded eval runs as the Aggregate state reads them: each run's shard outcomes become one run outcome.

The Plan state's eval items say which shards each run has (nothing is laid out again here), so the aggregator
knows every shard each run should have, including those that never reported, and finds each shard's outcome
by its result file. The shards' RunResults are checked (the run's identity,
the shard's own tasks, settings shared by all shards) and merged (:func:`rlinf_bench.stats.shards.merge_shards`)
into the run's own file, ``<suite>/run<k>.json``, where an unsharded run writes it; the run then goes
through the same checks as any other. A shard whose Job failed, whose file is unusable or that never
reported makes the run INCOMPLETE with its tasks named, and adds its own failure line; so does a shard that
says it is complete but lacks some of its tasks. Shards whose settings differ are judged against the settings
most of the run's shards share; when no settings have a majority, none is trusted and each is named.
"""

from __future__ import annotations

from collections.abc import Sequence

from rlinf_aws.eval_results import read_outcome
from rlinf_bench.contracts.request import EvalRequest
from rlinf_bench.contracts.workflow import OutcomeStatus, RunOutcome, WorkItem
from rlinf_bench.document_store import Storage
from rlinf_bench.sharding import RunShard
from rlinf_bench.stats.aggregate import settings_difference
from rlinf_bench.stats.shards import ShardPart, false_complete, merge_shards

__all__ = ["merge_shard_outcomes"]


def _part(request: EvalRequest, shard: RunShard, outcome: RunOutcome | None, storage: Storage) -> ShardPart:
    uri = shard.run.output_uri or ""
    tasks = tuple(shard.run.task_ids or ())
    if outcome is None:
        why = f"no outcome for {uri}: the Job never reported (re-run the checkpoint to evaluate these tasks)"
        return ShardPart(shard.label, tasks, uri, missing=why)
    got = read_outcome(request, outcome, storage)
    if isinstance(got, str):
        return ShardPart(shard.label, tasks, uri, missing=got)
    found = sorted(t.task_id for t in got.result.tasks)
    if not set(found) <= set(tasks):
        why = f"result {uri} holds tasks {found}, the shard's are {list(tasks)}: the file belongs to another shard"
        return ShardPart(shard.label, tasks, uri, missing=why)
    return ShardPart(shard.label, tasks, uri, result=got.result)


def _settings_differ(a: ShardPart, b: ShardPart) -> str | None:
    assert a.result is not None and b.result is not None
    # Shards hold different tasks by design: compare everything else (checkpoint, policy, steps...).
    return settings_difference(a.result.with_tasks([]), b.result.with_tasks([]))


def _odd_shards(parts: list[ShardPart]) -> list[ShardPart]:
    """Shards whose settings differ from those most of the run's usable shards share lose their result, named
    against a shard of that majority; with no majority (a tie), every usable shard loses it: a good shard is
    never blamed for an odd one's settings, nor an odd one kept because it came first."""
    classes: list[list[ShardPart]] = []
    for p in (p for p in parts if p.result is not None):
        home = next((c for c in classes if _settings_differ(c[0], p) is None), None)
        if home is None:
            classes.append([p])
        else:
            home.append(p)
    if len(classes) < 2:
        return parts
    classes.sort(key=len, reverse=True)
    majority = classes[0] if len(classes[0]) > len(classes[1]) else None
    out: list[ShardPart] = []
    for p in parts:
        if p.result is None or (majority is not None and any(p is q for q in majority)):
            out.append(p)
            continue
        if majority is not None:
            ref = majority[0]
            why = f"does not match {ref.label} (the settings {len(majority)} of the run's shards share)"
        else:
            ref = next(c[0] for c in classes if not any(p is q for q in c))
            why = f"and {ref.label} disagree, and no settings are shared by most of the run's shards"
        missing = f"result {p.source} {why}: {_settings_differ(ref, p)}"
        out.append(ShardPart(p.label, p.task_ids, p.source, missing=missing))
    return out


def _merged_outcome(
    request: EvalRequest, shards: Sequence[RunShard], outcomes: dict[str, RunOutcome], storage: Storage
) -> tuple[RunOutcome, list[str]]:
    parts = _odd_shards([_part(request, s, outcomes.get(s.run.output_uri or ""), storage) for s in shards])
    lines = [f"{p.label}: {p.missing}" for p in parts if p.missing] + [w for p in parts if (w := false_complete(p))]
    first = shards[0]
    run = first.run
    merged = merge_shards(parts)
    if merged is None:
        error = f"every shard of {run.suite} run {run.run_index} failed"
        return _run_outcome(first, OutcomeStatus.FAILED, error=error, cause="; ".join(lines)), lines
    storage.write_text(first.run_uri, merged.to_json(), content_type="application/json")
    headline = f"{run.suite} run {run.run_index}: {len(shards)} shards merged, {merged.status.value}"
    return _run_outcome(first, OutcomeStatus.SUCCEEDED, headline=headline), lines


def _run_outcome(first: RunShard, status: OutcomeStatus, **fields: str) -> RunOutcome:
    """The merged run's outcome, at the unsharded run's result file."""
    run = first.run
    return RunOutcome(
        status=status, kind="eval", result_uri=first.run_uri, suite=run.suite, run_index=run.run_index, **fields
    )


def _planned_shards(items: Sequence[WorkItem]) -> dict[tuple[str, int], list[RunShard]]:
    """(suite, run index) -> the shards the Plan state laid out for that run, in shard order."""
    sharded: dict[tuple[str, int], list[RunShard]] = {}
    for item in items:
        if item.run is not None and item.shard is not None:
            shard = RunShard(run=item.run, index=item.shard.index, count=item.shard.count, run_uri=item.shard.run_uri)
            sharded.setdefault((item.run.suite, item.run.run_index), []).append(shard)
    return {key: sorted(shards, key=lambda s: s.index) for key, shards in sharded.items()}


def merge_shard_outcomes(
    request: EvalRequest, items: Sequence[WorkItem], outcomes: Sequence[RunOutcome], storage: Storage
) -> tuple[list[RunOutcome], list[str]]:
    """The eval outcomes with each sharded run's shard outcomes replaced by one outcome of the merged run
    (failed when no shard produced a result), and one failure line per failed or missing shard; ``items`` are
    the Plan state's eval items.

    Unsharded runs (``shards: 1``) pass through untouched: their outcomes, files and report are as before.
    """
    sharded = _planned_shards(items)
    if not sharded:
        return list(outcomes), []
    by_run: dict[tuple[str, int], dict[str, RunOutcome]] = {key: {} for key in sharded}
    # The merged run takes its first shard's place among the outcomes (a run none of whose shards
    # reported comes last), so the report lists runs as an unsharded execution does.
    order: list[RunOutcome | tuple[str, int]] = []
    for o in outcomes:
        key = (o.suite or "", o.run_index if o.run_index is not None else -1)
        if key not in by_run:
            order.append(o)
            continue
        if not by_run[key]:
            order.append(key)
        by_run[key].setdefault(o.result_uri, o)  # a second report of one shard: only the first counts
    order += [key for key in sharded if not by_run[key]]
    out: list[RunOutcome] = []
    lines: list[str] = []
    for entry in order:
        if isinstance(entry, RunOutcome):
            out.append(entry)
            continue
        outcome, why = _merged_outcome(request, sharded[entry], by_run[entry], storage)
        out.append(outcome)
        lines += why
    return out, lines
