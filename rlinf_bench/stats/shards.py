"""The shards of one eval run merged back into the run's RunResult (rlinf_bench.sharding splits them).

Every task's episodes come from exactly one shard, so the merged tasks (in task-id order, as an unsharded
run lists them) are the unsharded run's episode for episode. A shard that is missing, failed or
interrupted leaves its tasks out and the merged run INCOMPLETE, with the missing tasks and the reason
named: never a smaller complete run, so the suite's verdicts stay ``incomplete``. A shard that says it is
complete yet lacks some of its tasks is named as such (:func:`false_complete`): its Job reported success on
less than its share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rlinf_bench.contracts import RunResult, RunStatus, TaskResult, Timings

__all__ = ["ShardPart", "false_complete", "merge_shards"]


@dataclass(frozen=True)
class ShardPart:
    """One shard as the aggregator found it: its label and tasks, and its RunResult or why there is none."""

    label: str  # libero_10 run 0 shard 2/3
    task_ids: tuple[int, ...]
    source: str
    result: RunResult | None = None
    missing: str = ""  # why no usable result (empty when ``result`` is set)


def _timings(results: Sequence[RunResult]) -> Timings:
    # The shards ran side by side: the run took as long as its slowest shard; work adds up.
    started = [r.timings.started_at for r in results if r.timings.started_at]
    finished = [r.timings.finished_at for r in results if r.timings.finished_at]
    return Timings(
        started_at=min(started) if started else "",
        finished_at=max(finished) if finished else "",
        wall_s=max(r.timings.wall_s for r in results),
        env_setup_s=sum(r.timings.env_setup_s for r in results),
        env_steps=sum(r.timings.env_steps for r in results),
        policy_calls=sum(r.timings.policy_calls for r in results),
        policy_s=sum(r.timings.policy_s for r in results),
        sim_s=sum(r.timings.sim_s for r in results),
    )


def _gaps(part: ShardPart) -> tuple[list[TaskResult], list[str]]:
    """The tasks of a shard to keep (complete ones, or the finished episodes of an interrupted shard) and,
    when some of its episodes are missing, why."""
    if part.result is None:
        return [], [f"{part.label} (tasks {list(part.task_ids)}): {part.missing}"]
    found = {t.task_id for t in part.result.tasks}
    if part.result.status == RunStatus.COMPLETE and found == set(part.task_ids):
        return list(part.result.tasks), []
    lie = false_complete(part)
    if lie:
        return list(part.result.tasks), [lie]
    why = part.result.error or f"status {part.result.status.value}"
    lost = sorted(set(part.task_ids) - found)
    tail = f", tasks {lost} missing" if lost else ""
    return list(part.result.tasks), [
        f"{part.label} (tasks {list(part.task_ids)}) is {part.result.status.value}{tail}: {why}"
    ]


def false_complete(part: ShardPart) -> str:
    """Why a shard that says it is complete is not (some of its tasks hold no episode); '' otherwise."""
    if part.result is None or part.result.status != RunStatus.COMPLETE:
        return ""
    lost = sorted(set(part.task_ids) - {t.task_id for t in part.result.tasks})
    if not lost:
        return ""
    return (
        f"{part.label} (tasks {list(part.task_ids)}) says it is complete but holds no episode of tasks {lost} "
        f"({part.source}): those tasks are missing from the run"
    )


def merge_shards(parts: Sequence[ShardPart]) -> RunResult | None:
    """The run's RunResult from its shards; None when no shard produced one (the run then failed).

    Identity and settings come from the first usable shard (the caller has checked that the shards agree);
    provenance keeps, per shard, where its result came from. Any gap makes the run INCOMPLETE with an
    error naming the shards and tasks that are missing.
    """
    usable = [p.result for p in parts if p.result is not None]
    if not usable:
        return None
    tasks: list[TaskResult] = []
    gaps: list[str] = []
    for part in parts:
        kept, why = _gaps(part)
        tasks += kept
        gaps += why
    head = usable[0]
    provenance = head.provenance.model_copy(
        update={
            "extra": {
                **head.provenance.extra,
                "shards": [
                    {"shard": p.label, "tasks": list(p.task_ids), "result": p.source, "host": p.result.provenance.host}
                    for p in parts
                    if p.result is not None
                ],
            }
        }
    )
    merged = head.model_copy(
        update={
            "status": RunStatus.INCOMPLETE if gaps else RunStatus.COMPLETE,
            "error": ("shards missing episodes: " + "; ".join(gaps)) if gaps else None,
            "timings": _timings(usable),
            "provenance": provenance,
        }
    )
    return merged.with_tasks(sorted(tasks, key=lambda t: t.task_id))
