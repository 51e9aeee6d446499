"""Two checkpoints with a robustness profile and failure reasons: at step 200 the standard SR rose, camera fell
decisively (the headline flag), and task 2 has 12 more grasp failures than at step 100; failed episodes of
three reasons have a video, and so has one failed perturbed episode. What the report, MLflow and message tests
render."""

from __future__ import annotations

from pathlib import Path

from rlinf_bench.contracts import (
    CheckpointReport,
    EpisodeResult,
    FailureReason,
    Perturbation,
    PerturbationAxis,
    RunResult,
    TaskResult,
)
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.verdicts import apply_verdicts
from tests.unit.stats.perturbedfactory import Perturbed, perturbed_run
from tests.unit.stats.runfactory import checkpoint

CAMERA, LIGHT, LAYOUT = PerturbationAxis.CAMERA, PerturbationAxis.LIGHT, PerturbationAxis.LAYOUT
GRASP, DROPPED, NEVER = FailureReason.GRASP_FAILED, FailureReason.DROPPED, FailureReason.NEVER_REACHED
STATES = 50
TASKS = {
    0: "pick_up_the_black_bowl_and_place_it_on_the_plate",
    1: "open_the_top_drawer",
    2: "put_the_bowl_on_the_stove",
}


def reason(task: int, state: int, run: int, p: Perturbation | None) -> FailureReason:
    """Task 2 fails by grasp, task 1 by dropping, task 0 never reaches; perturbed episodes never reach."""
    if p is not None:
        return NEVER
    return {0: NEVER, 1: DROPPED, 2: GRASP}[task]


def _outcomes(step: int, run: int) -> tuple[dict[int, list[int]], Perturbed]:
    """Standard: tasks 0 and 1 fail states 0-5 at step 100 and 0-1 at step 200 (the SR rose); task 2 fails states
    0-1, and at step 200 states 2-13 in run 0 too (12 more grasp failures). Camera: level l fails the first
    2 l states at step 100, 4 l at step 200 (camera fell)."""
    failing = 6 if step == 100 else 2
    control = {t: [0 if s < failing else 1 for s in range(STATES)] for t in (0, 1)}
    extra = range(2, 14) if step == 200 and run == 0 else range(0)
    control[2] = [0 if s < 2 or s in extra else 1 for s in range(STATES)]
    per_level = 2 if step == 100 else 4
    perturbed: Perturbed = {
        (CAMERA, level): {t: [0 if s < per_level * level else 1 for s in range(STATES)] for t in TASKS}
        for level in (1, 2, 3)
    }
    perturbed[(LIGHT, 1)] = {t: [0 if s < failing else 1 for s in range(STATES)] for t in TASKS}
    perturbed[(LAYOUT, 1)] = {t: [0 if s < failing + 1 else 1 for s in range(10)] for t in TASKS}
    return control, perturbed


def robust_runs(step: int, video: Path | None = None, perturbed_video: Path | None = None) -> list[RunResult]:
    """Three runs of one checkpoint; with ``video``, every failed standard episode of state 0 (and of task 2's
    state 3) names it; with ``perturbed_video``, run 0's failed camera level 2 episode of task 1's state 0."""
    out = []
    for r in range(3):
        control, perturbed = _outcomes(step, r)
        run = perturbed_run(control, perturbed, run_index=r, ckpt=checkpoint(step), reason_of=reason)
        run = run.with_tasks([t.model_copy(update={"task_name": TASKS[t.task_id]}) for t in run.tasks])
        if video is not None:
            tasks = []
            for t in run.tasks:
                named = {0, 3} if t.task_id == 2 else {0}
                eps = [
                    e.model_copy(update={"video": str(video)}) if e.init_state in named and not e.success else e
                    for e in t.episodes
                ]
                tasks.append(t.model_copy(update={"episodes": eps}))
            run = run.with_tasks(tasks)
        if perturbed_video is not None and r == 0:
            run = run.with_tasks([_with_perturbed_video(t, perturbed_video) for t in run.tasks])
        out.append(run)
    return out


def _with_perturbed_video(task: TaskResult, video: Path) -> TaskResult:
    def named(e: EpisodeResult) -> bool:
        p = e.perturbation
        return task.task_id == 1 and e.init_state == 0 and p is not None and (p.axis, p.level) == (CAMERA, 2)

    return task.model_copy(
        update={"perturbed": [e.model_copy(update={"video": str(video)}) if named(e) else e for e in task.perturbed]}
    )


def _source(step: int, run_index: int, video: Path | None) -> str:
    return str(video.parent / f"step{step}-run{run_index}.json") if video else f"{step}-{run_index}"


def robust_checkpoints(video: Path | None = None, perturbed_video: Path | None = None) -> list[CheckpointReport]:
    """Step 100, then step 200 with verdicts against it."""
    reports: list[CheckpointReport] = []
    for step in (100, 200):
        runs = robust_runs(step, video, perturbed_video)
        report = aggregate_checkpoint([SourcedRun(_source(step, r.run_index, video), r) for r in runs])
        apply_verdicts(report, [], reports)
        reports.append(report)
    return reports
