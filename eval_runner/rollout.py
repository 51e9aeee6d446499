"""The rollout: N worker processes step their episodes; the policy is called with whatever rows are ready.

A worker that sent its observation waits only for the policy call its row is in, never for the other
workers: a batch is formed from the observations ready when the policy is free (see
:mod:`eval_runner.batching` for when exactly), the call runs on a background thread while the other
workers keep stepping, and each worker in the batch gets its row's action. A worker whose episode
ended (the env's own success, or the task's step limit) immediately gets the next episode; its reset
and settle overlap with the other workers' steps. The same loop runs every env kind: the kind's
:class:`~eval_runner.envs.kinds.EnvRun` says each task's step limit, the action size, and what a start
reports besides the observation (RoboTwin: the episode's seed, instruction and skipped seeds). Episodes do not influence each other, so for a policy whose
rows are independent the outcome of an episode depends neither on batching nor on the worker count.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from multiprocessing.connection import wait
from typing import TYPE_CHECKING, Any

import numpy as np

from eval_runner.batching import BatchPolicy, CallResult, OccupancyWindow, PolicyCaller, SteppingClock
from eval_runner.failure_reasons import FailureCause, episode_failure
from eval_runner.policies.base import ACTION_DIM, Policy
from eval_runner.policies.checks import check_actions
from eval_runner.progress import Progress
from eval_runner.result_writer import ResultWriter
from eval_runner.rollout_videos import RolloutVideos
from eval_runner.run_result import ResultBuilder
from eval_runner.scheduler import EpisodeTask, Scheduler
from eval_runner.settings import EvalSettings
from eval_runner.vector import WorkerDied, WorkerHandle
from rlinf_bench.contracts import EpisodeResult, Perturbation, RunResult, RunStatus
from rlinf_bench.errors import PolicyError, RenderingError, RlinfBenchError, SimulatorError, WorkerCrashError

if TYPE_CHECKING:
    from eval_runner.envs.kinds import EnvRun

log = logging.getLogger(__name__)


class Rollout:
    """Runs every episode of a scheduler on a set of workers, feeding results to a builder and a writer."""

    def __init__(
        self,
        *,
        policy: Policy,
        scheduler: Scheduler,
        workers: list[WorkerHandle],
        builder: ResultBuilder,
        writer: ResultWriter,
        settings: EvalSettings,
        progress: Progress,
        task_language: dict[int, str],
        videos: RolloutVideos | None = None,
        on_episode: Callable[[RunResult], None] | None = None,
        env: EnvRun | None = None,
    ) -> None:
        """``env``: the run's env kind side (step limits per task, action size, start records); None: LIBERO's
        defaults (the builder's max steps for every task, 7-d actions), for stand-in workers in tests."""
        self.policy = policy
        self.scheduler = scheduler
        self.workers = workers
        self.builder = builder
        self.writer = writer
        self.settings = settings
        self.progress = progress
        self.language = task_language
        self.videos = videos
        self.on_episode = on_episode
        self.env = env
        self.action_dim = env.spaces.action_dim if env is not None else ACTION_DIM
        self.settle_steps = builder.settle_steps
        self.total = progress.total  # all episodes of the run, including any resumed ones
        self.batching = BatchPolicy(window_s=settings.batch_window_ms / 1000.0, max_batch=settings.max_batch)
        self._obs: dict[int, tuple[dict[str, Any], float]] = {}  # worker index -> (observation, ready since)
        self._new: list[str] = []  # episode ids that started since the last policy call
        self._caller: PolicyCaller | None = None
        # Steady state: the workers' stepping phases (resets and scene builds excluded), see SteppingClock.
        self._steady = SteppingClock(len(workers))
        # Whole-run rate while every worker had work: resets included, start-up and last wave excluded.
        self._occupancy = OccupancyWindow(len(workers))

    # -- main loop -------------------------------------------------------------------------------
    def run(self) -> None:
        """Run until every episode finished; raises on a policy error or a crash loop."""
        self._caller = PolicyCaller(self.policy)
        try:
            while True:
                self._assign_idle_workers()
                self._maybe_act()
                if not self._caller.in_flight and not self._obs and not any(w.pending for w in self.workers):
                    return
                self._wait_and_receive()
        finally:
            self._caller.close()
            self._record_steady()

    def _assign_idle_workers(self) -> None:
        idle = [w for w in self.workers if w.started and w.episode is None and w.pending is None]
        # Workers holding a scene first: a state that becomes known goes to a worker that built its scene.
        for w in sorted(idle, key=lambda w: w.loaded_task is None):
            self._assign(w)
        self._start_next_wave()

    def _start_next_wave(self) -> None:
        """Start the workers created unstarted once every started worker has answered its first start.

        With more workers than cores, starting all at once makes every one build its scene at a fraction
        of a core, so the first observation (and the GPU's first call) comes last. The first wave gets
        the cores to itself; the rest start while it steps.
        """
        later = [w for w in self.workers if not w.started]
        if later and not any(w.started and w.pending in ("start", "load") and not w.answered for w in self.workers):
            for w in later:
                w.spawn()
                self._assign(w)

    def _assign(self, w: WorkerHandle) -> None:
        """Start the worker's next episode (its reset then overlaps with the other workers' steps)."""
        ep = self.scheduler.next_for(w.loaded_task)
        if ep is None:
            if not self.scheduler.waiting():
                self._occupancy.worker_idle(time.perf_counter(), self.builder.counters.env_steps)
            else:  # queued episodes wait for a reset in flight: not idle, and a scene can be built meanwhile
                self._prepare_scene(w)
            return
        if self.videos is not None:
            ep = self.videos.plan(ep)
        w.episode = ep
        w.episode_seed = None
        w.instruction = None
        w.perturbation = None
        w.steps = 0
        w.started_at = time.perf_counter()
        try:
            w.send(("start", ep, self.settle_steps))
            w.pending = "start"
        except WorkerDied as exc:
            self._crashed(w, str(exc))

    def _prepare_scene(self, w: WorkerHandle) -> None:
        """Have a waiting worker build the scene of a task whose next state a reset in flight will give."""
        if w.pending is not None:
            return
        if w.loaded_task is not None and self.scheduler.queued(w.loaded_task):
            return  # it waits for its own task's next state, with that scene
        held = Counter(
            other.loaded_task
            for other in self.workers
            if other.episode is None and other.loaded_task is not None and other is not w
        )
        task = self.scheduler.task_to_prepare(held)
        if task is None or task == w.loaded_task:
            return
        try:
            w.send(("load", task))
        except WorkerDied as exc:
            self._crashed(w, str(exc))
            return
        w.pending = "load"
        w.loaded_task = task  # counted as held by the next waiting worker; a restart clears it

    def _wait_and_receive(self) -> None:
        """Block until a worker answers, the policy call returns, a batch window closes, or a reply is overdue."""
        now = time.monotonic()
        waiting = [w for w in self.workers if w.pending in ("start", "step", "load")]
        expired = [w for w in waiting if now - w.sent_at > self._limit(w)]
        for w in expired:
            what = "a scene build/reset" if w.pending in ("start", "load") else "a step"
            self._crashed(w, f"worker {w.index} did not answer {what} within {self._limit(w):.0f} s", kill=True)
        if expired:
            return
        timeouts = [w.sent_at + self._limit(w) - now for w in waiting]
        if self._obs and self._caller is not None and not self._caller.busy:
            oldest = min(t for _, t in self._obs.values())
            timeouts.append(self.batching.wait_s(oldest, time.perf_counter()))
        conns: dict[Any, WorkerHandle | None] = {w.conn: w for w in waiting if w.conn is not None}
        if self._caller is not None and self._caller.in_flight:
            conns[self._caller.wake] = None
        if not conns:
            return
        timeout = min(timeouts) if timeouts else None
        ready = wait(list(conns), timeout=None if timeout is None or timeout == float("inf") else max(0.0, timeout))
        for conn in ready:
            handle = conns[conn]
            if handle is None:
                self._complete_call()
            else:
                self._receive(handle)

    def _step_limit(self, task_id: int) -> int:
        return self.env.step_limit(task_id) if self.env is not None else self.builder.max_steps

    def _limit(self, w: WorkerHandle) -> float:
        if w.pending in ("start", "load"):
            return self.settings.start_timeout_s
        return self.settings.step_timeout_s

    def _receive(self, w: WorkerHandle) -> None:
        was = w.pending
        w.pending = None
        try:
            _, obs, info = w.recv()
        except WorkerDied as exc:
            self._crashed(w, str(exc))
            return
        except RenderingError as exc:
            self._rendering_failed(w, exc)
            return
        except SimulatorError as exc:
            if was != "step" or not self._fail_episode(w, exc):
                raise
            return
        c = self.builder.counters
        if was == "load":  # the scene is built; the next _assign_idle_workers gives it an episode
            c.env_setup_s += float(info.get("setup_s", 0.0))
            c.scenes_prepared += 1
            return
        c.sim_s += float(info.get("sim_s", 0.0))
        if w.episode is None:
            raise SimulatorError(f"worker {w.index} answered while running no episode (runner bug)")
        if was == "start":
            c.env_setup_s += float(info.get("setup_s", 0.0))
            c.resets += 1
            c.reset_s += float(info.get("sim_s", 0.0))
            self.scheduler.record_reset(w.episode, info.get("rng_after_reset"))
            w.loaded_task = w.episode.task_id
            w.episode_seed = info.get("seed")
            w.instruction = info.get("instruction")
            w.perturbation = info.get("perturbation")
            if info.get("notes") and self.env is not None:
                self.env.record_start(w.episode.task_id, info["notes"], self.builder.provenance.extra)
            if info.get("refused"):  # a perturbation with no valid draw: recorded, never played
                self._finish(w, success=False, error=f"perturbation refused: {info['refused']}")
                self._assign(w)
                return
            self._new.append(w.episode.episode_id)
            now = time.perf_counter()
            self._obs[w.index] = (obs, now)
            self._steady.begin(w.index, now)
            self._occupancy.worker_started(w.index, now, c.env_steps)
            return
        steps = int(info.get("steps", 1))
        w.steps += steps
        c.env_steps += steps
        self._steady.step(w.index, float(info.get("sim_s", 0.0)), steps)
        if info.get("done") or w.steps >= self._step_limit(w.episode.task_id):
            self._steady.end(w.index, time.perf_counter())
            self._finish(w, success=bool(info.get("done")), failure=info.get("failure"))
            self._assign(w)  # right away, not after the next policy call
        else:
            self._obs[w.index] = (obs, time.perf_counter())

    def _record_steady(self) -> None:
        # RunCounters' steady figures: env steps/s and the share of worker time not spent in env.step.
        c, s = self.builder.counters, self._steady
        # As wall time of N workers in parallel: steps / (summed phase time / N) = the workers' rates summed.
        c.steady_cycles += c.policy_calls
        c.steady_s += s.seconds / max(1, s.workers)
        c.steady_rows += s.steps
        c.steady_sim_s += s.sim_s / max(1, s.workers)
        window = self._occupancy.figures()
        if window is not None:
            c.occupied_s, c.occupied_steps = window

    # -- policy ----------------------------------------------------------------------------------
    def _maybe_act(self) -> None:
        """Send the ready rows to the policy if it is free and the batch is due."""
        caller = self._caller
        if caller is None or caller.busy or not self._obs:
            return
        now = time.perf_counter()
        oldest = min(t for _, t in self._obs.values())
        more_coming = any(w.pending == "step" for w in self.workers)
        if not self.batching.due(len(self._obs), oldest, more_coming, now):
            return
        order = sorted(self._obs, key=lambda i: self._obs[i][1])[: self.batching.max_batch]
        rows = [self._obs.pop(i)[0] for i in order]
        workers = [self.workers[i] for i in order]
        episodes = [w.episode for w in workers if w.episode is not None]
        # an instruction the scene worded (RoboTwin's, a language perturbation's) wins, even a blank one
        texts = [
            self.language[ep.task_id] if w.instruction is None else w.instruction
            for w, ep in zip(workers, episodes, strict=True)
        ]
        batch = stack_observations(rows, texts, [ep.episode_id for ep in episodes])
        for w in workers:
            w.pending = "policy"
        c = self.builder.counters
        if c.first_act_at == 0.0:
            c.first_act_at = now
        caller.submit(list(zip(workers, episodes, strict=True)), self._new, batch, len(rows))
        self._new = []

    def _complete_call(self) -> None:
        """Hand each row's action to its worker (one whose episode changed meanwhile is skipped)."""
        assert self._caller is not None
        done = self._caller.collect()
        if done is None:
            return
        actions = self._check_call(done)
        c = self.builder.counters
        c.policy_s += done.elapsed_s
        c.policy_calls += 1
        c.vector_steps += 1
        c.batch_rows += done.rows
        for (w, ep), action in zip(done.tag, actions, strict=True):
            if w.episode is not ep or w.pending != "policy":
                continue  # its worker crashed and was restarted while the policy ran
            limit = self._step_limit(ep.task_id)
            if action.ndim == 2:  # an action chunk: executed open loop by the worker, cut at the step limit
                action = action[: limit - w.steps]
                c.chunk_steps += len(action)
            # the episode's last steps: the worker sends back why it failed, if it does
            last = w.steps + (len(action) if action.ndim == 2 else 1) >= limit
            try:
                w.send(("step", action, last))
                w.pending = "step"
            except WorkerDied as exc:
                self._crashed(w, str(exc))

    def _check_call(self, done: CallResult) -> np.ndarray:
        exc = done.error
        if isinstance(exc, RlinfBenchError):
            raise exc
        if exc is not None:  # a bug in user policy code: fail the run, naming the policy
            raise PolicyError(
                f"policy {self.builder.run.policy!r} raised {type(exc).__name__} on a batch of {done.rows}: {exc}"
            ) from exc
        # float64: the simulator's dtype; a float32 round trip would change a float64 policy's actions
        return check_actions(
            done.actions,
            done.rows,
            source=f"policy {self.builder.run.policy!r}",
            chunks=True,
            dtype=np.float64,
            action_dim=self.action_dim,
        )

    # -- episode end and crashes -----------------------------------------------------------------
    def _fail_episode(self, w: WorkerHandle, exc: SimulatorError) -> bool:
        """``--on-episode-error fail-episode``: a simulator exception in a step fails only its episode, as in
        OpenVLA-OFT's script; returns False when the run must fail instead (the default, or another error)."""
        protocol = self.builder.protocol
        if protocol is None or protocol.on_episode_error != "fail-episode" or type(exc) is not SimulatorError:
            return False
        log.warning("episode %s failed on a simulator error (counted as a failure): %s", w.episode, exc)
        self._finish(w, success=False, error=str(exc))
        self._assign(w)
        return True

    def _finish(
        self, w: WorkerHandle, *, success: bool, error: str | None = None, failure: FailureCause | None = None
    ) -> None:
        ep = w.episode
        if ep is None:
            raise SimulatorError(f"worker {w.index} finished an episode it was not running (runner bug)")
        reason, detail = episode_failure(success, error, failure, w.steps)
        video = self.videos.finish(w, ep, success, reason) if self.videos is not None and ep.record_video else None
        result = EpisodeResult(
            init_state=ep.init_state,
            seed=ep.seed if w.episode_seed is None else w.episode_seed,
            success=success,
            steps=w.steps,
            wall_s=round(time.perf_counter() - w.started_at, 3),
            retries=ep.attempt,
            video=video,
            error=error,
            perturbation=self._perturbation(w, ep),
            failure_reason=reason,
            failure_detail=detail,
        )
        self.builder.add(ep.task_id, result)
        self.builder.counters.last_finish_at = time.perf_counter()
        w.episode = None
        log.info(
            "episode done task=%d init_state=%d%s success=%s%s steps=%d wall_s=%.1f retries=%d",
            ep.task_id,
            ep.init_state,
            f" perturbation={ep.perturbation.tag}" if ep.perturbation else "",
            success,
            f" ({reason.value})" if reason is not None else "",
            w.steps,
            result.wall_s,
            ep.attempt,
        )
        done = self.builder.finished_all
        self.progress.episode_done(success, counted=ep.perturbation is None)
        snapshot = self.builder.build(
            RunStatus.INCOMPLETE,
            f"run in progress (or stopped without a final write): {done} of {self.total} episodes finished",
        )
        self.writer.write(snapshot)
        if self.on_episode is not None:
            self.on_episode(snapshot)

    def _perturbation(self, w: WorkerHandle, ep: EpisodeTask) -> Perturbation | None:
        """A perturbed episode's record, as its start reported it (None for a standard episode)."""
        if ep.perturbation is None:
            return None
        if w.perturbation is None:
            raise SimulatorError(f"the scene of {ep.episode_id} did not report its perturbation (runner bug)")
        return w.perturbation

    def _crashed(self, w: WorkerHandle, reason: str, *, kill: bool = False) -> None:
        """Restart a dead (or hung) worker and re-queue its episode from scratch, within the retry budget."""
        ep = w.episode
        self._obs.pop(w.index, None)
        self._steady.discard(w.index)
        if kill:
            w.kill()
        w.restart()
        self.builder.counters.worker_restarts += 1
        if ep is None:
            return
        if ep.episode_id in self._new:
            self._new.remove(ep.episode_id)
        nxt = ep.retry()
        if nxt.attempt > self.settings.max_retries:
            raise WorkerCrashError(
                f"task {ep.task_id} initial state {ep.init_state} crashed its worker {nxt.attempt} times "
                f"(last: {reason}); giving up after max_retries={self.settings.max_retries}. Check the worker log "
                "above for the cause (out of memory? rendering driver?), lower --workers, or raise the retry budget"
            )
        log.warning("%s during %s; re-running it from scratch (retry %d)", reason, ep.episode_id, nxt.attempt)
        self.scheduler.requeue_front(nxt)

    def _rendering_failed(self, w: WorkerHandle, exc: RenderingError) -> None:
        """An EGL/OpenGL failure in a worker: restart it once; a second failure ends the run (never a hang).

        A rendering context that cannot be created does not come back by re-running the episode, so it
        has its own budget (one restart per worker) apart from the crash retries, and the episode is not
        charged an attempt.
        """
        ep = w.episode
        self._obs.pop(w.index, None)
        self._steady.discard(w.index)
        if w.render_failures >= 1:
            raise RenderingError(
                f"worker {w.index} failed to render again after a restart: {exc}. Check that the GPU's EGL "
                "driver is visible in the container (libEGL_nvidia, __EGL_VENDOR_LIBRARY_FILENAMES), that "
                "MUJOCO_EGL_DEVICE_ID names an existing EGL device, and that the GPU has memory left (lower --workers)"
            ) from exc
        w.render_failures += 1
        w.restart()
        self.builder.counters.worker_restarts += 1
        log.warning("worker %d: %s; restarted it once", w.index, exc)
        if ep is not None:
            if ep.episode_id in self._new:
                self._new.remove(ep.episode_id)
            self.scheduler.requeue_front(ep)


def stack_observations(rows: list[dict[str, Any]], language: list[str], episode_ids: list[str]) -> dict[str, Any]:
    """Stack per-episode observations into the batch dict of :class:`Policy.act`: arrays (LIBERO's images and
    proprioception) into one array per key, anything else (RoboTwin's ``get_obs()`` dicts) into a list."""
    batch: dict[str, Any] = {}
    for key in rows[0] if rows else ():
        values = [row[key] for row in rows]
        batch[key] = np.stack(values) if all(isinstance(v, np.ndarray) for v in values) else values
    batch["task_description"] = list(language)
    batch["episode_id"] = list(episode_ids)
    return batch
