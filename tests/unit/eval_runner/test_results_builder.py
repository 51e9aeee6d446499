"""Result assembly: suite totals follow the finished episodes; unfinished tasks are listed empty."""

from __future__ import annotations

from eval_runner.run_result import ResultBuilder
from rlinf_bench.contracts import CheckpointRef, EpisodeResult, EvalRun, Provenance, RunStatus
from rlinf_bench.suites import get_suite


def test_given_some_finished_episodes_then_the_result_counts_only_them_and_keeps_every_task() -> None:
    run = EvalRun(
        request_id="r",
        checkpoint=CheckpointRef(uri="/c", experiment="e", global_step=1),
        suite="libero_spatial",
        run_index=2,
        seed=5,
        task_ids=[0, 1],
        trials_per_task=3,
    )
    tasks = [get_suite("libero_spatial").task(t) for t in (0, 1)]
    builder = ResultBuilder(run, tasks, max_steps=220, settle_steps=10, provenance=Provenance(host="h"))
    builder.add(0, EpisodeResult(init_state=1, seed=11, success=True, steps=40, wall_s=1.0))
    builder.add(0, EpisodeResult(init_state=0, seed=10, success=False, steps=220, wall_s=2.0, retries=1))
    builder.counters.policy_calls = 7

    result = builder.build(RunStatus.INCOMPLETE, "stopped")

    assert (result.episodes, result.successes, result.success_rate) == (2, 1, 0.5)
    assert [e.init_state for e in result.tasks[0].episodes] == [0, 1]  # sorted by initial state
    assert result.tasks[1].episodes == [] and result.tasks[1].trials == 3
    assert (result.status, result.error, result.run_index, result.seed) == (RunStatus.INCOMPLETE, "stopped", 2, 5)
    assert result.timings.policy_calls == 7 and result.provenance.host == "h"
    assert result.checkpoint is not None and result.checkpoint.uri == "/c"
