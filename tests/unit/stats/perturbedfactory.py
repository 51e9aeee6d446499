"""Build RunResults with perturbed episodes and failure reasons from outcome tables, for the robustness and
failure-reason statistics, reports, MLflow and message tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rlinf_bench.contracts import (
    CheckpointRef,
    CheckpointReport,
    EpisodeResult,
    FailureReason,
    Perturbation,
    PerturbationAxis,
    RunResult,
)
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.robustness import CategoryOf
from tests.unit.stats.runfactory import CKPT, make_run

#: The size of one level of each axis, with its unit (level 2 is twice as strong).
STEP: dict[PerturbationAxis, tuple[float, str]] = {
    PerturbationAxis.CAMERA: (5.0, "deg"),
    PerturbationAxis.ROBOT_INIT: (0.05, "rad"),
    PerturbationAxis.LANGUAGE: (1.0, "template"),
    PerturbationAxis.LIGHT: (0.25, "intensity factor"),
    PerturbationAxis.TEXTURE: (1.0, "texture"),
    PerturbationAxis.NOISE: (8.0, "px sigma"),
    PerturbationAxis.LAYOUT: (0.02, "m"),
}

#: (axis, level) -> task -> per initial state: success (1/0) of the perturbed episode, or None (not played)
Perturbed = Mapping[tuple[PerturbationAxis, int], Mapping[int, Sequence[int | None]]]
#: (task, init_state, run_index, perturbation or None) -> why that failed episode failed (None: no reason)
ReasonOf = Callable[[int, int, int, Perturbation | None], FailureReason | None]


def perturbation(axis: PerturbationAxis, level: int) -> Perturbation:
    size, unit = STEP[axis]
    return Perturbation(axis=axis, level=level, magnitude=size * level, unit=unit, params={"drawn": float(level)})


def perturbed_run(
    control: Mapping[int, Sequence[int]],
    perturbed: Perturbed,
    *,
    run_index: int = 0,
    ckpt: CheckpointRef | None = CKPT,
    reason_of: ReasonOf | None = None,
    suite: str = "libero_spatial",
    task_names: Mapping[int, str] | None = None,
) -> RunResult:
    """One run: ``control[task][state]`` the standard episodes (make_run's), ``perturbed`` beside them; failed
    episodes get ``reason_of``'s reason."""
    base = make_run(control, run_index=run_index, ckpt=ckpt, suite=suite, task_names=task_names)
    tasks = []
    for task in base.tasks:
        episodes = [
            e.model_copy(update={"failure_reason": _reason(reason_of, task.task_id, e, run_index, None)})
            for e in task.episodes
        ]
        extra = []
        for (axis, level), per_task in perturbed.items():
            for state, success in enumerate(per_task.get(task.task_id, ())):
                if success is None:
                    continue
                p = perturbation(axis, level)
                e = EpisodeResult(init_state=state, seed=run_index, success=bool(success), steps=10, wall_s=0.1)
                extra.append(
                    e.model_copy(
                        update={"perturbation": p, "failure_reason": _reason(reason_of, task.task_id, e, run_index, p)}
                    )
                )
        successes = sum(e.success for e in episodes)
        tasks.append(
            task.model_copy(
                update={
                    "episodes": episodes,
                    "perturbed": extra,
                    "successes": successes,
                    "success_rate": successes / len(episodes) if episodes else 0.0,
                }
            )
        )
    return base.with_tasks(tasks)


def _reason(
    reason_of: ReasonOf | None, task_id: int, e: EpisodeResult, run: int, p: Perturbation | None
) -> FailureReason | None:
    if e.success or reason_of is None:
        return None
    return reason_of(task_id, e.init_state, run, p)


def sourced(runs: Sequence[RunResult]) -> list[SourcedRun]:
    return [
        SourcedRun(f"{r.suite}-{r.checkpoint.global_step if r.checkpoint else 0}-run{r.run_index}.json", r)
        for r in runs
    ]


def report_of(runs: Sequence[RunResult], *, category_of: CategoryOf | None = None) -> CheckpointReport:
    """The runs aggregated, every run expected."""
    return aggregate_checkpoint(sourced(runs), runs_expected=len({r.run_index for r in runs}), category_of=category_of)
