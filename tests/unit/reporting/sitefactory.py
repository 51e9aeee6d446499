"""Two checkpoints with flipped states, a changed torch, videos (one present, one missing) and a task name
that is HTML: what the site, notification and browser tests render."""

from __future__ import annotations

from pathlib import Path

from rlinf_bench.contracts import CheckpointReport, Provenance, RunResult
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.verdicts import apply_verdicts
from tests.unit.stats.runfactory import checkpoint, make_run

BASE = [1] * 40 + [0] * 10  # states 0-39 pass in every run, 40-49 fail in every run
NASTY = "<script>alert('x')</script> & <b>bold</b>"
NAMES = {0: NASTY, 1: "pick_up_the_bowl", 2: "open_the_drawer"}


def _runs(step: int, outcomes: dict[int, list[int]], torch: str, video: Path | None) -> list[RunResult]:
    out = []
    for i in range(3):
        run = make_run(outcomes, run_index=i, ckpt=checkpoint(step), task_names=NAMES)
        first = run.tasks[0]
        videos = {0: str(video) if video else None, 1: "/nonexistent/episode_1.mp4"}
        eps = [e.model_copy(update={"video": videos.get(e.init_state)}) for e in first.episodes]
        run = run.with_tasks([first.model_copy(update={"episodes": eps}), *run.tasks[1:]])
        prov = Provenance(
            packages={"torch": torch, "mujoco": "3.2.0"},
            gpu=["NVIDIA H200 (143771 MiB, driver 570.86)"],
            rendering_backend="egl",
            command=["rlinf-bench", "evaluate", "--suite", "libero_spatial"],
        )
        out.append(run.model_copy(update={"provenance": prov}))
    return out


def _source(step: int, run_index: int, video: Path | None) -> str:
    """Where the run's RunResult was read from: beside its video (a run's videos are in its own folder)."""
    return str(video.parent / f"step{step}-run{run_index}.json") if video else f"{step}-{run_index}"


def two_checkpoints(video: Path | None = None) -> list[CheckpointReport]:
    """Step 100, then step 200 with 4 states of task 0 broken and a newer torch."""
    before = aggregate_checkpoint(
        [
            SourcedRun(_source(100, r.run_index, video), r)
            for r in _runs(100, {t: list(BASE) for t in NAMES}, "2.5.1", video)
        ]
    )
    apply_verdicts(before, [])
    now_outcomes = {t: list(BASE) for t in NAMES}
    for state in (0, 3, 7, 11):
        now_outcomes[0][state] = 0
    for t in NAMES:
        now_outcomes[t][20:30] = [0] * 10  # a broad drop, so the verdict is below
    now = aggregate_checkpoint(
        [SourcedRun(_source(200, r.run_index, video), r) for r in _runs(200, now_outcomes, "2.6.0", video)]
    )
    apply_verdicts(now, [], [before])
    return [before, now]
