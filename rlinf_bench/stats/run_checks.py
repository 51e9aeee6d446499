"""What a RunResult must hold before its episodes count: checks that need the suite catalogue.

The contract (:class:`rlinf_bench.contracts.RunResult`) refuses what its shape alone shows: a
non-boolean ``success``, an initial state played twice in one task, a task listed twice. This module
adds what only the suite knows, and computes completeness instead of trusting ``status``:

- :func:`check_run_result` refuses an unknown suite, a task id or an initial state outside the suite,
  naming the file and the field (a refused file fails its run, it never enters a statistic);
- :func:`completeness_gaps` says why a run that claims ``complete`` is not: a run is complete only when
  every task it lists holds exactly ``trials_per_task`` episodes (distinct initial states, by the contract,
  inside the suite's range, by the check above);
- :func:`seed_repeats` finds the runs of one suite whose seed an earlier run already used: the same
  seed replays the same episodes, so three such runs are one run counted three times.
"""

from __future__ import annotations

from collections.abc import Sequence

from rlinf_bench.contracts import RunResult, RunStatus
from rlinf_bench.errors import ContractError, UnknownSuiteError
from rlinf_bench.suites import SuiteSpec, get_suite

__all__ = ["check_run_result", "completeness_gaps", "computed_status", "seed_repeats"]

#: Gaps listed in a reason before the rest is counted (a run of 90 tasks could list 90).
_GAPS_SHOWN = 3


def _suite(result: RunResult, source: str) -> SuiteSpec:
    try:
        return get_suite(result.suite)
    except UnknownSuiteError as exc:
        raise ContractError(f"RunResult {source}: field suite: {exc}") from None


def check_run_result(result: RunResult, source: str) -> SuiteSpec:
    """``result``'s suite, once every task id and initial state lies inside it; else ContractError naming
    ``source`` and the field (``tasks[2].episodes[7].init_state``)."""
    spec = _suite(result, source)
    for i, task in enumerate(result.tasks):
        if task.task_id >= spec.n_tasks:
            raise ContractError(
                f"RunResult {source}: field tasks[{i}].task_id: {task.task_id} is outside suite {spec.name}, whose "
                f"tasks are 0-{spec.n_tasks - 1}; the file is not a run of this suite"
            )
        for j, ep in enumerate(task.episodes):
            if ep.init_state >= spec.init_states:
                raise ContractError(
                    f"RunResult {source}: field tasks[{i}].episodes[{j}].init_state: {ep.init_state} is outside "
                    f"the {spec.init_states} initial states of suite {spec.name} (0-{spec.init_states - 1}); "
                    "the file is not a run of this suite"
                )
    return spec


def completeness_gaps(result: RunResult) -> list[str]:
    """Why ``result`` is not complete whatever its status says (empty: every listed task holds exactly the
    requested trials, and there is at least one task)."""
    if not result.tasks:
        return ["it lists no task"]
    gaps = []
    for task in result.tasks:
        if task.trials != result.trials_per_task:
            gaps.append(f"task {task.task_id} scheduled {task.trials} trials, the run {result.trials_per_task}")
        elif len(task.episodes) != result.trials_per_task:
            gaps.append(f"task {task.task_id} holds {len(task.episodes)} of {result.trials_per_task} trials")
    if len(gaps) > _GAPS_SHOWN:
        gaps = [*gaps[:_GAPS_SHOWN], f"{len(gaps) - _GAPS_SHOWN} more task(s) short"]
    return gaps


def computed_status(result: RunResult) -> RunResult:
    """``result`` as it counts: a run that claims ``complete`` with episodes missing becomes ``incomplete``,
    its error saying what is missing (the episodes present stay real)."""
    if result.status != RunStatus.COMPLETE:
        return result
    gaps = completeness_gaps(result)
    if not gaps:
        return result
    why = f"claims status complete, but {'; '.join(gaps)}"
    error = f"{result.error}; {why}" if result.error else why
    return result.model_copy(update={"status": RunStatus.INCOMPLETE, "error": error})


def seed_repeats(results: Sequence[RunResult]) -> dict[int, str]:
    """Run index -> why it is refused, for each run of one suite whose seed an earlier run (by run index)
    already used."""
    first: dict[int, int] = {}
    out: dict[int, str] = {}
    for r in sorted(results, key=lambda x: x.run_index):
        if r.seed in first:
            out[r.run_index] = (
                f"seed {r.seed} is also run {first[r.seed]}'s seed: runs with one seed replay the same episodes, "
                "so they are not independent runs; give each run its own seed (EvalRequest.seeds)"
            )
        else:
            first[r.seed] = r.run_index
    return out
