"""The vectorized rollout: N worker processes step their episodes in lockstep, one policy call per vector step.

Each vector step gathers the observation of every episode that is waiting for an action, calls the
policy *once* with that batch, and sends each worker its row. A worker whose episode ended (LIBERO's
success, or the horizon) immediately gets the next episode; its reset and settle overlap with the
other workers' steps, and its first observation joins the next batch it is ready for. Episodes do
not influence each other, so for a policy whose rows are independent the outcome of an episode does
not depend on batching or scheduling.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

import numpy as np

from eval_runner.policies.base import ACTION_DIM, Policy
from eval_runner.progress import Progress
from eval_runner.result_writer import ResultWriter
from eval_runner.results import ResultBuilder
from eval_runner.scheduler import EpisodeTask, Scheduler
from eval_runner.settings import EvalSettings
from eval_runner.vector import WorkerDied, WorkerHandle
from rlinf_bench.contracts import EpisodeResult, RunResult, RunStatus
from rlinf_bench.errors import PolicyError, RlinfBenchError, SimulatorError, WorkerCrashError

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
        video_dir: Path | None = None,
        on_episode: Callable[[RunResult], None] | None = None,
    ) -> None:
        self.policy = policy
        self.scheduler = scheduler
        self.workers = workers
        self.builder = builder
        self.writer = writer
        self.settings = settings
        self.progress = progress
        self.language = task_language
        self.video_dir = video_dir
        self.on_episode = on_episode
        self.max_steps = builder.max_steps
        self.settle_steps = builder.settle_steps
        self.total = progress.total  # all episodes of the run, including any resumed ones
        self._obs: dict[int, dict[str, Any]] = {}  # worker index -> observation waiting for an action
        self._new: list[str] = []  # episode ids that started since the last policy call
        # Steady-state timing: a cycle (policy call to policy call) in which every worker stepped and no
        # episode started or ended measures pure parallel stepping; resets and scene builds are not in it.
        self._last_act: float | None = None
        self._last_rows = 0
        self._cycle_clean = False
        self._cycle_sim_max = 0.0  # slowest worker's own step time in the current cycle

    # -- main loop -------------------------------------------------------------------------------
    def run(self) -> None:
        """Run until every episode finished; raises on a policy error or a crash loop."""
        while True:
            self._assign_idle_workers()
            if not any(w.pending for w in self.workers) and not self._obs:
                return
            self._gather()
            if self._obs:
                self._act()

    def _assign_idle_workers(self) -> None:
        for w in self.workers:
            if w.episode is None:
                self._assign(w)

    def _assign(self, w: WorkerHandle) -> None:
        """Start the worker's next episode (its reset then overlaps with the other workers' steps)."""
        ep = self.scheduler.next_for(w.loaded_task)
        if ep is None:
            return
        w.episode = ep
        w.steps = 0
        w.started_at = time.perf_counter()
        try:
            w.send(("start", ep, self.settle_steps))
            w.pending = "start"
        except WorkerDied as exc:
            self._crashed(w, str(exc))

    def _gather(self) -> None:
        """Wait for every stepping worker; take starting workers that are ready (block for one if none step)."""
        while True:
            stepping = [w for w in self.workers if w.pending == "step"]
            starting = [w for w in self.workers if w.pending == "start"]
            if not stepping and (self._obs or not starting):
                return
            now = time.monotonic()
            expired = [w for w in stepping + starting if now - w.sent_at > self._limit(w)]
            for w in expired:
                what = "a scene build/reset" if w.pending == "start" else "a step"
                self._crashed(w, f"worker {w.index} did not answer {what} within {self._limit(w):.0f} s", kill=True)
            if expired:
                continue
            pending = stepping + starting
            block = bool(stepping) or not self._obs
            timeout = min(w.sent_at + self._limit(w) - now for w in pending) if block else 0.0
            conns = {w.conn: w for w in pending if w.conn is not None}
            ready = wait(list(conns), timeout=max(0.0, timeout))
            for conn in ready:
                self._receive(conns[conn])  # type: ignore[index]

    def _limit(self, w: WorkerHandle) -> float:
        if w.pending == "start":
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
        except SimulatorError as exc:
            if was != "step" or not self._fail_episode(w, exc):
                raise
            return
        c = self.builder.counters
        c.sim_s += float(info.get("sim_s", 0.0))
        if w.episode is None:
            raise SimulatorError(f"worker {w.index} answered while running no episode (runner bug)")
        if was == "start":
            c.env_setup_s += float(info.get("setup_s", 0.0))
            self.scheduler.record_reset(w.episode, info.get("rng_after_reset"))
            w.loaded_task = w.episode.task_id
            self._new.append(w.episode.episode_id)
            self._cycle_clean = False
            self._obs[w.index] = obs
            return
        w.steps += 1
        c.env_steps += 1
        self._cycle_sim_max = max(self._cycle_sim_max, float(info.get("sim_s", 0.0)))
        if info.get("done") or w.steps >= self.max_steps:
            self._finish(w, success=bool(info.get("done")))
            self._assign(w)  # right away, not after this vector step
        else:
            self._obs[w.index] = obs

    # -- policy ----------------------------------------------------------------------------------
    def _act(self) -> None:
        now = time.perf_counter()
        c = self.builder.counters
        if c.first_act_at == 0.0:
            c.first_act_at = now
        if self._last_act is not None and self._cycle_clean and self._last_rows == len(self.workers):
            c.steady_cycles += 1
            c.steady_s += now - self._last_act
            c.steady_rows += self._last_rows
            c.steady_sim_s += self._cycle_sim_max
        self._cycle_sim_max = 0.0
        order = sorted(self._obs)
        rows = [self._obs.pop(i) for i in order]
        workers = [self.workers[i] for i in order]
        episodes = [w.episode for w in workers]
        batch = stack_observations(
            rows,
            [self.language[ep.task_id] for ep in episodes if ep is not None],
            [ep.episode_id for ep in episodes if ep is not None],
        )
        t0 = time.perf_counter()
        try:
            if self._new:
                self.policy.reset(self._new)
                self._new = []
            raw_actions = self.policy.act(batch)
        except RlinfBenchError:
            raise
        except Exception as exc:  # a bug in user policy code: fail the run, naming the policy
            raise PolicyError(
                f"policy {self.builder.run.policy!r} raised {type(exc).__name__} on a batch of {len(rows)}: {exc}"
            ) from exc
        actions = check_actions(raw_actions, len(rows))
        c.policy_s += time.perf_counter() - t0
        c.policy_calls += 1
        c.vector_steps += 1
        c.batch_rows += len(rows)
        self._last_act, self._last_rows, self._cycle_clean = now, len(rows), True
        for w, action in zip(workers, actions, strict=True):
            try:
                w.send(("step", action))
                w.pending = "step"
            except WorkerDied as exc:
                self._crashed(w, str(exc))

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

    def _finish(self, w: WorkerHandle, *, success: bool, error: str | None = None) -> None:
        ep = w.episode
        if ep is None:
            raise SimulatorError(f"worker {w.index} finished an episode it was not running (runner bug)")
        video = self._save_video(w, ep) if ep.record_video else None
        result = EpisodeResult(
            init_state=ep.init_state,
            seed=ep.seed,
            success=success,
            steps=w.steps,
            wall_s=round(time.perf_counter() - w.started_at, 3),
            retries=ep.attempt,
            video=video,
            error=error,
        )
        self.builder.add(ep.task_id, result)
        self._cycle_clean = False
        self.builder.counters.last_finish_at = time.perf_counter()
        w.episode = None
        log.info(
            "episode done task=%d init_state=%d success=%s steps=%d wall_s=%.1f retries=%d",
            ep.task_id,
            ep.init_state,
            success,
            w.steps,
            result.wall_s,
            ep.attempt,
        )
        done = self.builder.finished
        self.progress.episode_done(success)
        snapshot = self.builder.build(
            RunStatus.INCOMPLETE,
            f"run in progress (or stopped without a final write): {done} of {self.total} episodes finished",
        )
        self.writer.write(snapshot)
        if self.on_episode is not None:
            self.on_episode(snapshot)

    def _save_video(self, w: WorkerHandle, ep: EpisodeTask) -> str | None:
        if self.video_dir is None:
            return None
        name = f"task{ep.task_id:02d}_init{ep.init_state:02d}"
        try:
            w.send(("video", str(self.video_dir / name)))
            _, local = w.recv()
        except WorkerDied as exc:
            # the episode's outcome is already known: a lost video must not cost the run
            log.error("video of %s lost: %s", ep.episode_id, exc)
            self.builder.provenance.extra.setdefault("video_errors", []).append(f"{ep.episode_id}: {exc}")
            w.restart()
            self.builder.counters.worker_restarts += 1
            return None
        except RlinfBenchError as exc:
            log.error("video of %s not written: %s", ep.episode_id, exc)
            self.builder.provenance.extra.setdefault("video_errors", []).append(f"{ep.episode_id}: {exc}")
            return None
        if self.writer.is_s3:
            return self.writer.upload(Path(local), self.writer.sibling(f"videos/{Path(local).name}"))
        return str(local)

    def _crashed(self, w: WorkerHandle, reason: str, *, kill: bool = False) -> None:
        """Restart a dead (or hung) worker and re-queue its episode from scratch, within the retry budget."""
        ep = w.episode
        self._obs.pop(w.index, None)
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


def stack_observations(rows: list[dict[str, Any]], language: list[str], episode_ids: list[str]) -> dict[str, Any]:
    """Stack per-episode observations into the batch dict of :class:`Policy.act`."""
    batch: dict[str, Any] = {key: np.stack([row[key] for row in rows]) for key in rows[0]} if rows else {}
    batch["task_description"] = list(language)
    batch["episode_id"] = list(episode_ids)
    return batch


def check_actions(actions: Any, batch: int) -> np.ndarray:
    """The policy's actions as a ``[batch, 7]`` float array, or a PolicyError saying what is wrong."""
    try:
        arr = np.asarray(actions, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise PolicyError(f"policy returned {type(actions).__name__}, not a numeric [B, 7] array: {exc}") from exc
    if arr.shape != (batch, ACTION_DIM):
        raise PolicyError(
            f"policy returned actions of shape {arr.shape} for a batch of {batch} observations; "
            f"it must return one {ACTION_DIM}-dim action per row: [{batch}, {ACTION_DIM}]"
        )
    if not np.isfinite(arr).all():
        raise PolicyError("policy returned NaN or infinite actions")
    return arr
