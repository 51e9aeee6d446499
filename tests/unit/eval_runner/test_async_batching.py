"""The rollout's scheduling with stand-in workers: no lockstep, worker-count independence, EGL restarts.

The workers are real processes speaking the worker pipe protocol (tests/unit/eval_runner/fake_worker.py)
with a tiny deterministic simulator, so these run in seconds and need no timing assumptions: a straggler
is a worker that *cannot* answer until other episodes have finished.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from eval_runner.batching import BatchPolicy
from eval_runner.envs.libero_scene import LiberoScenes
from eval_runner.policies.base import ObservationSpec, Policy
from eval_runner.progress import Progress
from eval_runner.result_writer import ResultWriter
from eval_runner.rollout import Rollout
from eval_runner.rollout_videos import RolloutVideos
from eval_runner.run_result import ResultBuilder
from eval_runner.scheduler import Scheduler, plan_episodes
from eval_runner.settings import EvalSettings
from eval_runner.vector import WorkerConfig, WorkerHandle, close_all
from rlinf_bench.contracts import CheckpointRef, EvalRun, Provenance, RunResult, RunStatus
from rlinf_bench.contracts.robustness import RobustnessSpec
from rlinf_bench.errors import RenderingError
from rlinf_bench.suites import get_suite
from tests.unit.eval_runner.fake_worker import FakeOptions, fake_worker

SUITE = "libero_spatial"


class RowWise(Policy):
    """Actions from each row's own observation; records what every episode saw and every batch's ids."""

    obs_spec = ObservationSpec(cameras=(), proprio=())

    def __init__(self) -> None:
        self.seen: dict[str, list[np.ndarray]] = defaultdict(list)
        self.batches: list[list[str]] = []
        self.resets: list[str] = []

    def reset(self, episode_ids: list[str]) -> None:
        self.resets.extend(episode_ids)

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        self.batches.append(list(obs["episode_id"]))
        out = np.zeros((len(obs["episode_id"]), 7))
        for i, episode_id in enumerate(obs["episode_id"]):
            x = obs["x"][i]
            self.seen[episode_id].append(x.copy())
            out[i, :2] = 0.5 * np.sin(3.0 * x) + 0.3
        return out


def rollout(
    tmp_path: Path,
    workers: int,
    *,
    trials: int = 4,
    max_steps: int = 12,
    options: FakeOptions | None = None,
    policy: Policy | None = None,
    on_episode: Any = None,
    later: int = 0,
    handle: type[WorkerHandle] = WorkerHandle,
    robustness: RobustnessSpec | None = None,
    videos: int = 0,
    progress: Progress | None = None,
    **settings: Any,
) -> tuple[RunResult, ResultBuilder, Policy]:
    """Run ``trials`` episodes of task 0 on ``workers`` stand-in workers; the final result, builder, policy.

    The last ``later`` workers are created unstarted: the rollout starts them after the first wave. With
    ``robustness``, the perturbed episodes are played too; with ``videos``, up to that many per task are kept
    in ``tmp_path / "run0.videos"``.
    """
    run = EvalRun(
        request_id="t",
        checkpoint=CheckpointRef(uri="", experiment="none", global_step=0),
        suite=SUITE,
        run_index=0,
        seed=3,
        task_ids=[0],
        trials_per_task=trials,
        max_steps=max_steps,
        workers=workers,
        videos=videos,
        robustness=robustness,
    )
    policy = policy or RowWise()
    builder = ResultBuilder(run, [get_suite(SUITE).task(0)], max_steps, 0, Provenance(host="test"))
    config = WorkerConfig(scenes=LiberoScenes(suite=SUITE, obs_spec=policy.obs_spec, horizon=max_steps))
    target = functools.partial(fake_worker, options or FakeOptions())
    handles = [handle(i, config, "spawn", target=target, start=i < workers - later) for i in range(workers)]
    writer = ResultWriter(str(tmp_path / f"r{workers}.json"))
    try:
        Rollout(
            policy=policy,
            scheduler=Scheduler(plan_episodes(SUITE, run.seed, [0], trials, run.robustness)),
            workers=handles,
            builder=builder,
            writer=writer,
            settings=EvalSettings(progress=False, **settings),
            progress=progress or Progress(trials, desc="t", enabled=False),
            task_language={0: "do it"},
            on_episode=on_episode,
            videos=RolloutVideos(videos, tmp_path / "run0.videos", writer, builder) if videos else None,
        ).run()
    finally:
        close_all(handles)
    return builder.build(RunStatus.COMPLETE), builder, policy


def _episodes(result: RunResult) -> list[tuple[int, int, bool, int, int]]:
    return [(e.init_state, e.seed, e.success, e.steps, e.retries) for t in result.tasks for e in t.episodes]


def test_given_one_or_three_workers_then_every_episode_sees_the_same_observations_and_ends_the_same(
    tmp_path: Path,
) -> None:
    one, _, p1 = rollout(tmp_path, 1, trials=5)
    three, _, p3 = rollout(tmp_path, 3, trials=5)

    assert _episodes(one) == _episodes(three)
    assert isinstance(p1, RowWise) and isinstance(p3, RowWise)
    assert set(p1.seen) == set(p3.seen) == {f"t0-s{i}-a0" for i in range(5)}
    for episode_id, rows in p1.seen.items():
        assert np.array_equal(np.stack(rows), np.stack(p3.seen[episode_id])), episode_id
    # non-trivial: the episodes differ, and some end early on the simulator's own success check
    assert len({tuple(np.stack(r).ravel()[:4]) for r in p1.seen.values()}) == 5
    assert {e.success for t in one.tasks for e in t.episodes} == {True, False}


def test_given_a_straggling_worker_then_the_others_finish_episodes_while_it_has_not_answered(tmp_path: Path) -> None:
    release = tmp_path / "release"
    finished: list[int] = []

    def on_episode(snapshot: RunResult) -> None:
        finished[:] = [e.init_state for t in snapshot.tasks for e in t.episodes]
        if len([s for s in finished if s != 0]) >= 2:
            release.write_text("go\n")  # only now can the straggler answer its first step

    result, builder, policy = rollout(
        tmp_path,
        2,
        trials=4,
        options=FakeOptions(straggler=0, release=release),
        on_episode=on_episode,
        step_timeout_s=120.0,  # a lockstep runner would wait for the straggler until this kills it
    )

    states = {e.init_state: e for t in result.tasks for e in t.episodes}
    assert sorted(states) == [0, 1, 2, 3]
    assert states[0].retries == 0 and builder.counters.worker_restarts == 0  # never declared hung
    assert isinstance(policy, RowWise)
    # while episode 0 waited for its first action's step, the other worker ran whole episodes alone
    assert any(batch == ["t0-s1-a0"] for batch in policy.batches)


def test_given_a_batch_window_then_a_call_waits_for_more_rows_until_it_closes_or_no_row_can_come() -> None:
    free = BatchPolicy()
    assert free.due(ready=1, oldest_ready_at=0.0, more_coming=True, now=0.0)
    windowed = BatchPolicy(window_s=0.005, max_batch=3)
    assert windowed.due(ready=1, oldest_ready_at=1.0, more_coming=False, now=1.0)  # no worker is stepping
    assert not windowed.due(ready=2, oldest_ready_at=1.0, more_coming=True, now=1.001)
    assert windowed.due(ready=2, oldest_ready_at=1.0, more_coming=True, now=1.006)
    assert windowed.due(ready=3, oldest_ready_at=1.0, more_coming=True, now=1.0)
    assert windowed.wait_s(1.0, 1.002) == pytest.approx(0.003)


def test_given_a_batch_cap_then_no_policy_call_gets_more_rows(tmp_path: Path) -> None:
    result, _, policy = rollout(tmp_path, 3, trials=6, max_batch=2, batch_window_ms=50.0)

    assert isinstance(policy, RowWise)
    assert max(len(b) for b in policy.batches) <= 2
    assert result.episodes == 6 and sum(len(b) for b in policy.batches) == result.timings.env_steps


def test_given_a_rendering_failure_once_then_the_worker_is_restarted_and_the_episode_runs(tmp_path: Path) -> None:
    marker = tmp_path / "egl-failed"
    result, builder, _ = rollout(tmp_path, 1, trials=2, options=FakeOptions(render_fail=1, render_fail_once=marker))

    assert marker.exists()
    assert sorted(e.init_state for t in result.tasks for e in t.episodes) == [0, 1]
    assert builder.counters.worker_restarts == 1
    assert all(e.retries == 0 for t in result.tasks for e in t.episodes)  # not charged to the episode


def test_given_a_rendering_failure_twice_then_the_run_ends_with_the_egl_error_and_the_device(tmp_path: Path) -> None:
    with pytest.raises(RenderingError, match=r"failed to render again after a restart: .*EGL device 7"):
        rollout(tmp_path, 2, trials=3, options=FakeOptions(render_fail=1))


def test_given_a_policy_error_during_the_call_then_the_run_fails_naming_the_policy(tmp_path: Path) -> None:
    class Broken(RowWise):
        def act(self, obs: dict[str, Any]) -> np.ndarray:
            raise ValueError("bad weights")

    from rlinf_bench.errors import PolicyError

    with pytest.raises(PolicyError, match="raised ValueError on a batch of 1: bad weights"):
        rollout(tmp_path, 1, trials=1, policy=Broken())


class Chunked(RowWise):
    """RowWise's rule, but one call gives each row a chunk of ``k`` actions (the runner executes them)."""

    def __init__(self, k: int) -> None:
        super().__init__()
        self.k = k

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        one = super().act(obs)  # [B, 7] from each row's observation
        drift = np.linspace(0.0, 0.1, self.k)[None, :, None]  # the chunk's actions differ step to step
        return one[:, None, :] + drift


class QueuedChunks(Chunked):
    """The same chunks kept in the policy and handed out one action per call (the way before runner chunks)."""

    def __init__(self, k: int) -> None:
        super().__init__(k)
        self.queues: dict[str, list[np.ndarray]] = {}

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        ids = list(obs["episode_id"])
        need = [i for i, e in enumerate(ids) if not self.queues.get(e)]
        if need:
            sub = {"x": obs["x"][need], "episode_id": [ids[i] for i in need]}
            for i, chunk in zip(need, super().act(sub), strict=True):
                self.queues[ids[i]] = list(chunk)
        return np.stack([self.queues[e].pop(0) for e in ids])


def test_given_action_chunks_then_episodes_end_as_with_the_chunk_served_step_by_step_with_fewer_calls(
    tmp_path: Path,
) -> None:
    chunked, chunked_builder, chunked_policy = rollout(tmp_path, 2, trials=5, max_steps=12, policy=Chunked(5))
    queued, _, queued_policy = rollout(tmp_path, 1, trials=5, max_steps=12, policy=QueuedChunks(5))

    assert _episodes(chunked) == _episodes(queued)
    assert isinstance(chunked_policy, Chunked) and isinstance(queued_policy, QueuedChunks)
    for episode_id, rows in queued_policy.seen.items():  # the policy saw the same chunk-start observations
        assert np.array_equal(np.stack(rows), np.stack(chunked_policy.seen[episode_id])), episode_id
    steps = [e.steps for t in chunked.tasks for e in t.episodes]
    assert 12 in steps and any(s < 12 for s in steps)  # some hit the horizon (chunks 5+5+2), some succeed
    # one call per chunk: ceil(steps / 5) rows per episode, not one per step
    assert sum(len(b) for b in chunked_policy.batches) == sum(-(-s // 5) for s in steps)
    assert chunked_builder.counters.env_steps == sum(steps) == chunked.timings.env_steps


def test_given_a_chunk_longer_than_the_steps_left_then_the_episode_stops_at_the_horizon(tmp_path: Path) -> None:
    class Still(Chunked):
        def act(self, obs: dict[str, Any]) -> np.ndarray:
            self.batches.append(list(obs["episode_id"]))
            return np.zeros((len(obs["episode_id"]), 50, 7))  # x decays: never a success

    result, builder, policy = rollout(tmp_path, 1, trials=2, max_steps=12, policy=Still(50))

    assert [e.steps for t in result.tasks for e in t.episodes] == [12, 12]
    assert isinstance(policy, Still) and len(policy.batches) == 2
    assert builder.counters.chunk_steps == 24


def test_given_a_run_then_the_window_in_which_every_worker_had_an_episode_is_measured(tmp_path: Path) -> None:
    # Neither worker can step until both hold an episode: a slow spawn must not let one worker drain the queue.
    started = tmp_path / "started"
    started.mkdir()
    result, builder, _ = rollout(tmp_path, 2, trials=6, options=FakeOptions(started_dir=started, all_started=2))

    c = builder.counters
    assert c.occupied_s > 0 and 0 < c.occupied_steps <= result.timings.env_steps
    assert c.throughput()["occupied_env_steps_per_s"] == pytest.approx(c.occupied_steps / c.occupied_s)


def test_given_the_queue_empty_before_every_worker_started_then_no_occupancy_figure_is_claimed() -> None:
    from eval_runner.batching import OccupancyWindow

    window = OccupancyWindow(workers=3)
    window.worker_started(0, now=1.0, env_steps=0)
    window.worker_started(1, now=1.5, env_steps=4)
    window.worker_idle(now=2.0, env_steps=9)  # worker 2 never started: the run was too short for a window
    window.worker_started(2, now=2.5, env_steps=12)
    assert window.figures() is None

    full = OccupancyWindow(workers=2)
    full.worker_started(0, now=1.0, env_steps=0)
    full.worker_started(1, now=2.0, env_steps=5)
    full.worker_started(0, now=3.0, env_steps=20)  # a second episode does not move the start
    full.worker_idle(now=6.0, env_steps=45)
    full.worker_idle(now=7.0, env_steps=50)  # nor does a second idle worker move the end
    assert full.figures() == (4.0, 40)


class Recorded(WorkerHandle):
    """A worker handle that logs when its process starts and when it first answers."""

    events: ClassVar[list[tuple[str, int]]] = []

    def spawn(self) -> None:
        Recorded.events.append(("spawn", self.index))
        super().spawn()

    def recv(self) -> tuple[Any, ...]:
        first = not self.answered
        reply = super().recv()
        if first:
            Recorded.events.append(("answered", self.index))
        return reply


def test_given_workers_beyond_the_first_wave_then_they_start_after_its_scenes_and_the_episodes_do_not_change(
    tmp_path: Path,
) -> None:
    Recorded.events = []
    # Each worker's first episode holds its first step until all four have one, so the first wave cannot run
    # every episode before the later wave is up (its workers would then have nothing left to run).
    (tmp_path / "s").mkdir()
    (tmp_path / "a").mkdir()
    hold = functools.partial(FakeOptions, all_started=4)
    staggered, _, p_staggered = rollout(
        tmp_path, 4, trials=8, later=2, handle=Recorded, options=hold(started_dir=tmp_path / "s")
    )
    at_once, _, p_at_once = rollout(tmp_path, 4, trials=8, options=hold(started_dir=tmp_path / "a"))

    events = Recorded.events
    later_spawns = [events.index(("spawn", i)) for i in (2, 3)]
    first_answers = [events.index(("answered", i)) for i in (0, 1)]
    assert max(first_answers) < min(later_spawns), events
    assert ("answered", 2) in events and ("answered", 3) in events  # the later wave ran episodes too
    assert _episodes(staggered) == _episodes(at_once)
    assert isinstance(p_staggered, RowWise) and isinstance(p_at_once, RowWise)
    for episode_id, rows in p_at_once.seen.items():
        assert np.array_equal(np.stack(rows), np.stack(p_staggered.seen[episode_id])), episode_id


class Sends(WorkerHandle):
    """A worker handle that logs the kind of every message it sends (and the task of a scene build)."""

    sent: ClassVar[list[tuple[int, str, int | None]]] = []

    def send(self, msg: tuple[Any, ...]) -> None:
        task = msg[1] if msg[0] == "load" else msg[1].task_id if msg[0] == "start" else None
        Sends.sent.append((self.index, msg[0], task))
        super().send(msg)


def test_given_a_worker_waiting_for_a_reset_then_it_builds_the_scene_meanwhile_and_the_episodes_do_not_change(
    tmp_path: Path,
) -> None:
    Sends.sent = []
    prepared, builder, p_prepared = rollout(tmp_path, 3, trials=6, handle=Sends)
    loads = [(i, task) for i, kind, task in Sends.sent if kind == "load"]
    # one task: the first worker starts state 0, the other two wait for its reset and build the scene meanwhile
    assert sorted(loads) == [(1, 0), (2, 0)], Sends.sent
    for worker, task in loads:  # what it is sent next (if the others did not take every episode) is that task's
        after = [(kind, t) for i, kind, t in Sends.sent if i == worker]
        assert after[0] == ("load", task) and after[1:2] in ([], [("start", task)]), after
    assert builder.counters.scenes_prepared == 2

    # one worker never waits for another's reset, so it builds nothing ahead: the episodes are the same
    Sends.sent = []
    alone, builder_alone, p_alone = rollout(tmp_path, 1, trials=6, handle=Sends)
    assert not [kind for _, kind, _ in Sends.sent if kind == "load"]
    assert builder_alone.counters.scenes_prepared == 0
    assert _episodes(prepared) == _episodes(alone)
    assert isinstance(p_prepared, RowWise) and isinstance(p_alone, RowWise)
    for episode_id, rows in p_alone.seen.items():
        assert np.array_equal(np.stack(rows), np.stack(p_prepared.seen[episode_id])), episode_id
