"""Episode planning and scheduling: canonical order, task affinity, crashed episodes first."""

from __future__ import annotations

from eval_runner.scheduler import Scheduler, plan_episodes
from rlinf_bench.seeding import episode_seed


def test_given_tasks_and_trials_then_every_pair_is_planned_once_with_its_derived_seed() -> None:
    plan = plan_episodes("libero_goal", 7, [2, 5], 3, videos=2)

    assert [e.key for e in plan] == [(2, 0), (2, 1), (2, 2), (5, 0), (5, 1), (5, 2)]
    assert all(e.seed == episode_seed(7, "libero_goal", e.task_id, e.init_state) for e in plan)
    assert [e.record_video for e in plan] == [True, True, False, False, False, False]
    assert all(e.attempt == 0 for e in plan)


def test_given_a_worker_with_a_loaded_task_then_it_gets_that_task_before_the_queue_head() -> None:
    sched = Scheduler(plan_episodes("s", 0, [0, 1], 2))

    assert sched.next_for(None).key == (0, 0)  # type: ignore[union-attr]
    assert sched.next_for(1).key == (1, 0)  # type: ignore[union-attr]
    assert sched.next_for(1).key == (1, 1)  # type: ignore[union-attr]
    assert sched.next_for(1).key == (0, 1)  # type: ignore[union-attr]  # task 1 exhausted: take the head
    assert sched.next_for(0) is None and len(sched) == 0


def test_given_a_crashed_episode_when_requeued_then_it_runs_next_with_the_same_seed_and_a_new_attempt() -> None:
    sched = Scheduler(plan_episodes("s", 0, [0], 3))
    first = sched.next_for(None)
    assert first is not None

    sched.requeue_front(first.retry())
    again = sched.next_for(None)

    assert again is not None and again.key == first.key and again.seed == first.seed
    assert (again.attempt, again.episode_id) == (1, "t0-s0-a1")
    assert first.episode_id == "t0-s0-a0"
