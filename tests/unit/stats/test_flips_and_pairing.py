"""Flipped initial states, refused pairings, environment changes and per-task disagreement flags."""

from __future__ import annotations

import numpy as np
import pytest

from rlinf_bench.contracts import CheckpointReport, Provenance, RunResult, VerdictValue
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.flips import flip_summary
from rlinf_bench.stats.pertask import holm
from rlinf_bench.stats.verdicts import apply_verdicts
from tests.unit.stats.runfactory import checkpoint, make_run

BASE = [1] * 40 + [0] * 10  # states 0-39 pass in every run, 40-49 fail in every run


def runs(outcomes: dict[int, list[int]], step: int, **provenance: object) -> list[RunResult]:
    made = [make_run(outcomes, run_index=i, ckpt=checkpoint(step)) for i in range(3)]
    if provenance:
        made = [r.model_copy(update={"provenance": Provenance(**provenance)}) for r in made]
    return made


def report(made: list[RunResult]) -> CheckpointReport:
    return aggregate_checkpoint([SourcedRun(f"{r.checkpoint.global_step}-{r.run_index}", r) for r in made])  # type: ignore[union-attr]


def compare(now: list[RunResult], before: list[RunResult]) -> CheckpointReport:
    return apply_verdicts(report(now), [], previous_report=report(before))


def test_given_four_states_of_task_3_break_and_one_recovers_then_exactly_those_are_listed() -> None:
    before = {t: list(BASE) for t in range(5)}
    now = {t: list(BASE) for t in range(5)}
    for state in (0, 5, 9, 30):
        now[3][state] = 0
    now[1][45] = 1  # failed in every run before, passes in every run now
    cur = compare(runs(now, 200), runs(before, 100))
    suite = cur.suites[0]
    assert [(f.task_id, f.init_state, f.direction) for f in suite.flips] == [
        (1, 45, "to_success"),
        (3, 0, "to_failure"),
        (3, 5, "to_failure"),
        (3, 9, "to_failure"),
        (3, 30, "to_failure"),
    ]
    assert suite.flips[1].before == "3/3" and suite.flips[1].now == "0/3" and suite.flips[1].task_name == "task_3"
    assert suite.flips_against == "global_step 100"
    assert flip_summary(suite) == [
        "task 3 (task_3): 4 states flipped to failure",
        "task 1 (task_1): 1 state flipped to success",
    ]


def test_given_a_state_that_fails_in_only_some_runs_then_it_did_not_flip() -> None:
    before = {0: list(BASE)}
    made = runs(before, 200)
    made[0] = make_run({0: [0, *BASE[1:]]}, run_index=0, ckpt=checkpoint(200))  # state 0 fails in run 0 only
    assert compare(made, runs(before, 100)).suites[0].flips == []


def shifted(made: list[RunResult], offset: int) -> list[RunResult]:
    """The same runs with every initial state moved by ``offset`` (same trials, other states)."""
    out = []
    for r in made:
        eps = [e.model_copy(update={"init_state": e.init_state + offset}) for e in r.tasks[0].episodes]
        out.append(r.with_tasks([r.tasks[0].model_copy(update={"episodes": eps})]))
    return out


def test_given_different_initial_states_then_pairing_is_refused_with_the_reason_and_unpaired_is_labelled() -> None:
    cur = compare(runs({0: BASE[:30]}, 200), shifted(runs({0: BASE[:30]}, 100), 20))
    (v,) = cur.verdicts
    assert not v.paired and v.test.endswith("unpaired fallback") and v.test.startswith("two-proportion")
    assert v.reason.startswith("paired comparison refused: the checkpoints were evaluated on different initial states")
    assert "(20 only at this checkpoint, 20 only at the reference)" in v.reason


def test_given_different_trials_per_task_then_not_comparable_naming_them_and_no_flips() -> None:
    cur = compare(runs({0: BASE}, 200), runs({0: BASE[:30]}, 100))
    (v,) = cur.verdicts
    assert v.value == VerdictValue.NOT_COMPARABLE and v.p_value is None
    assert "trials per task differ: 50 here, 30 at the reference" in v.reason
    assert cur.suites[0].flips == []


def test_given_different_seeds_per_state_then_pairing_is_refused() -> None:
    before = runs({0: BASE}, 100)
    shifted = []
    for r in runs({0: BASE}, 200):
        eps = [e.model_copy(update={"seed": e.seed + 1000}) for e in r.tasks[0].episodes]
        shifted.append(r.with_tasks([r.tasks[0].model_copy(update={"episodes": eps})]))
    (v,) = compare(shifted, before).verdicts
    assert not v.paired and "50 initial state(s) were replayed with different seeds" in v.reason
    same = compare(runs({0: BASE}, 200), before).verdicts[0]
    assert same.paired and "refused" not in same.reason


def test_given_a_drop_under_a_new_torch_then_the_below_verdict_says_so_first() -> None:
    worse = {t: [1] * 25 + [0] * 25 for t in range(5)}
    before = runs({t: list(BASE) for t in range(5)}, 100, packages={"torch": "2.5.1", "mujoco": "3.2.0"})
    now = runs(worse, 200, packages={"torch": "2.6.0", "mujoco": "3.2.0"})
    (v,) = compare(now, before).verdicts
    assert v.value == VerdictValue.BELOW
    assert v.reason.startswith("environment changed: torch 2.5.1 → 2.6.0")
    assert [(c.field, c.category, c.before, c.now) for c in v.environment_changes] == [
        ("package torch", "packages", "2.5.1", "2.6.0")
    ]


def test_given_per_task_runs_that_disagree_then_that_task_is_flagged_with_holm_stated() -> None:
    rng = np.random.default_rng(3)
    outcomes = {t: (rng.random(50) < 0.5).astype(int).tolist() for t in range(6)}
    made = [make_run(outcomes, run_index=i) for i in range(3)]
    # Task 4: run 2 fails everything the other runs pass (a broken node on that task only).
    made[2] = make_run({**outcomes, 4: [0] * 50}, run_index=2)
    rep = report(made)
    flags = {t.task_id: t.disagreement for t in rep.suites[0].tasks}
    assert flags[4] is not None and flags[4].flagged
    assert flags[4].correction == "Holm over 6 tasks (family-wise error 0.01)"
    assert flags[4].p_adjusted == pytest.approx(min(1.0, 6 * flags[4].p_value))  # the smallest p: times m
    assert all(d is not None and not d.flagged for t, d in flags.items() if t != 4)


def test_holm_matches_the_step_down_definition() -> None:
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])
