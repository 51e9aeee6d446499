"""Episode planning and scheduling: canonical order, task affinity, crashed episodes first, and the
chain of reference RNG states each episode's reset starts from."""

from __future__ import annotations

import numpy as np

from eval_runner.scheduler import RNG_SCHEME, EpisodeTask, Scheduler, plan_episodes, seeded_state


def _state_after_draws(seed: int, draws: int) -> tuple[object, ...]:
    rng = np.random.RandomState(seed)
    rng.uniform(size=draws)
    return rng.get_state(legacy=True)  # type: ignore[return-value]


def _same_state(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]  # type: ignore[arg-type]


def test_given_tasks_and_trials_then_every_pair_is_planned_once_with_the_run_seed() -> None:
    plan = plan_episodes("libero_goal", 7, [2, 5], 3)

    assert [e.key for e in plan] == [(2, 0, ""), (2, 1, ""), (2, 2, ""), (5, 0, ""), (5, 1, ""), (5, 2, "")]
    assert all(e.seed == 7 for e in plan)  # env.seed(7) once per task, as the reference loop
    assert not any(e.record_video for e in plan)  # decided as each starts (rollout_videos)
    assert all(e.attempt == 0 and e.rng is None for e in plan)
    assert RNG_SCHEME == "reference-replay-v2"


def test_state_zero_is_numpys_state_right_after_seeding() -> None:
    np.random.seed(3)
    assert _same_state(seeded_state(3), np.random.get_state(legacy=True))  # type: ignore[arg-type]


def test_given_one_worker_then_it_runs_a_task_in_order_each_reset_starting_where_the_previous_one_ended() -> None:
    sched = Scheduler(plan_episodes("s", 0, [0], 3))

    first = sched.next_for(None)
    assert first is not None and first.key == (0, 0, "")
    assert first.rng is not None and first.rng.base_index == 0 and _same_state(first.rng.state, seeded_state(0))
    after_first = _state_after_draws(0, 58)  # what the reset of episode 0 leaves
    sched.record_reset(first, after_first)

    second = sched.next_for(0)
    assert second is not None and second.key == (0, 1, "")
    assert second.rng is not None and second.rng.base_index == 1 and _same_state(second.rng.state, after_first)


def test_given_two_idle_workers_then_the_second_takes_a_task_whose_state_is_known_rather_than_replay_resets() -> None:
    sched = Scheduler(plan_episodes("s", 0, [0, 1], 2))

    a = sched.next_for(None)
    b = sched.next_for(None)  # (0, 1) needs the reset of (0, 0) first: (1, 0) starts from a known state

    assert a is not None and b is not None
    assert (a.key, b.key) == ((0, 0, ""), (1, 0, ""))
    assert b.rng is not None and b.rng.base_index == 0


def test_given_an_unknown_state_whose_reset_is_in_flight_then_the_worker_waits_instead_of_replaying() -> None:
    sched = Scheduler(plan_episodes("s", 0, [0], 3))
    first = sched.next_for(None)
    assert first is not None

    assert sched.next_for(0) is None and sched.waiting()  # episode 0's reset has not reported yet
    sched.record_reset(first, _state_after_draws(0, 10))
    second = sched.next_for(0)

    assert second is not None and second.key == (0, 1, "")
    assert second.rng is not None and second.rng.base_index == 1  # no reset to replay


def test_given_no_reset_in_flight_then_an_unknown_state_is_reached_by_replaying_resets() -> None:
    sched = Scheduler([EpisodeTask(task_id=0, init_state=2, seed=0)])

    ep = sched.next_for(None)

    assert ep is not None and ep.rng is not None and ep.rng.base_index == 0  # the worker replays resets 0 and 1


def test_given_a_reset_that_crashed_then_the_waiting_workers_are_not_stuck() -> None:
    sched = Scheduler(plan_episodes("s", 0, [0], 3))
    first = sched.next_for(None)
    assert first is not None and sched.next_for(0) is None

    sched.requeue_front(first.retry())  # its worker died during the reset

    again = sched.next_for(0)
    assert again is not None and again.key == (0, 0, "") and again.attempt == 1


def test_given_fifteen_workers_on_one_task_then_no_reset_is_replayed_and_every_episode_runs() -> None:
    sched = Scheduler(plan_episodes("s", 0, [0], 30))
    idle, resetting, replayed, started = list(range(15)), [], 0, []
    while idle or resetting:
        for w in list(idle):  # every free worker asks; a reset then reports, oldest first
            ep = sched.next_for(0 if started else None)
            if ep is not None:
                idle.remove(w)
                resetting.append((w, ep))
                replayed += ep.init_state - ep.rng.base_index  # type: ignore[union-attr]
        if not resetting:
            break
        w, ep = resetting.pop(0)
        sched.record_reset(ep, _state_after_draws(0, 10 * (ep.init_state + 1)))
        started.append(ep.key)
        if len(sched):
            idle.append(w)

    assert replayed == 0
    assert sorted(started) == [(0, i, "") for i in range(30)]


def test_given_a_loaded_task_then_its_known_episodes_come_before_the_queue_head() -> None:
    sched = Scheduler(plan_episodes("s", 0, [0, 1], 2))
    e00 = sched.next_for(None)
    assert e00 is not None
    sched.record_reset(e00, _state_after_draws(0, 10))
    e10 = sched.next_for(1)
    assert e10 is not None and e10.key == (1, 0, "")
    sched.record_reset(e10, _state_after_draws(0, 20))

    assert sched.next_for(1).key == (1, 1, "")  # type: ignore[union-attr]
    assert sched.next_for(1).key == (0, 1, "")  # type: ignore[union-attr]  # task 1 exhausted: take what is left
    assert sched.next_for(0) is None and len(sched) == 0


def test_given_a_crashed_episode_when_requeued_then_it_runs_next_from_the_same_rng_state_with_a_new_attempt() -> None:
    sched = Scheduler(plan_episodes("s", 0, [0], 3))
    first = sched.next_for(None)
    assert first is not None and first.rng is not None

    sched.requeue_front(first.retry())
    again = sched.next_for(None)

    assert again is not None and again.key == first.key and again.seed == first.seed
    assert again.rng is not None and again.rng.base_index == 0 and _same_state(again.rng.state, first.rng.state)
    assert (again.attempt, again.episode_id) == (1, "t0-s0-a1")
    assert first.episode_id == "t0-s0-a0"


def test_a_reported_state_is_kept_once_and_a_missing_report_changes_nothing() -> None:
    sched = Scheduler(plan_episodes("s", 0, [0], 2))
    first = sched.next_for(None)
    assert first is not None
    sched.record_reset(first, None)
    sched.record_reset(first, _state_after_draws(0, 5))
    sched.record_reset(first, _state_after_draws(0, 9))  # a re-run reports again: the first report stands

    nxt = sched.next_for(0)
    assert nxt is not None and nxt.rng is not None
    assert _same_state(nxt.rng.state, _state_after_draws(0, 5))


def test_episodes_of_different_runs_keep_their_own_chains() -> None:
    sched = Scheduler([EpisodeTask(0, 0, 1), EpisodeTask(0, 0, 2)])
    a, b = sched.next_for(None), sched.next_for(None)
    assert a is not None and b is not None and a.rng is not None and b.rng is not None
    assert _same_state(a.rng.state, seeded_state(1)) and _same_state(b.rng.state, seeded_state(2))


def test_given_workers_left_waiting_then_each_is_pointed_at_the_task_with_a_reset_in_flight_and_fewest_holders() -> (
    None
):
    sched = Scheduler(plan_episodes("s", 0, [0, 1, 2], 3))
    started = [sched.next_for(None) for _ in range(3)]  # state 0 of every task: three resets in flight
    assert [e.key for e in started if e is not None] == [(0, 0, ""), (1, 0, ""), (2, 0, "")]
    assert sched.next_for(None) is None and sched.waiting()  # the rest wait for those resets

    assert sched.task_to_prepare({}) == 0  # queue order first
    assert sched.task_to_prepare({0: 1}) == 1  # task 0's next state already has a worker with its scene
    assert sched.task_to_prepare({0: 1, 1: 1}) == 2
    assert sched.task_to_prepare({0: 1, 1: 1, 2: 1}) == 0  # every task held once: the first again

    for ep in started:
        assert ep is not None
        sched.record_reset(ep, seeded_state(9))
    # no reset in flight: waiting would never end, so no scene is worth building on that account
    assert sched.task_to_prepare({}) is None
    assert sched.queued(1) and not sched.queued(5)
