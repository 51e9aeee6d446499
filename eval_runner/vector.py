"""Environment worker processes: each owns one scene of its run's env kind and steps it on request.

The worker is the same for every env kind: it builds scenes with the run's
:class:`~eval_runner.envs.kinds.SceneMaker` (LIBERO's MuJoCo scenes, RoboTwin's SAPIEN ones) and speaks
to the parent over a pipe with small messages:

- ``("start", EpisodeTask, settle_steps)`` -> ``("obs", obs, info)``: build the task's scene (reused
  when it is already built), reset to the episode's initial state as the kind seeds it, settle.
  ``info["rng_after_reset"]`` is where the next initial state's reset starts (the scheduler's chain);
  ``info`` also carries the episode's own env ``seed`` and ``instruction``, the kind's ``notes``, and a
  perturbed episode's ``perturbation`` record (or why it was ``refused``) when the scene gives them
  (:class:`~eval_runner.envs.kinds.EpisodeStart`).
- ``("load", task_id)`` -> ``("loaded", None, info)``: build the task's scene now (kept when it is already
  built), so that a worker waiting for its episode's start state is ready when the state is known.
- ``("step", actions, last)`` -> ``("obs", obs, info)``: one action or a ``[K, dim]`` chunk executed open
  loop (stopping at success); ``info["done"]`` = the env's own success check, ``info["steps"]`` = steps taken.
  ``last``: the chunk ends at the episode's step limit; if it ends without success, ``info["failure"]`` is the
  scene's :class:`~eval_runner.failure_reasons.FailureCause` (None for a kind without a tracker).
- ``("video", path)`` -> ``("ok", path)``: write the frames of the episode that just ended.
- ``("close",)``: close the scene and exit.

Errors raised on purpose come back as ``("error", class name, message)``; a worker that *dies*
(segfault, OOM kill, ``os._exit``) shows up as a closed pipe, which the parent turns into a retry.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from eval_runner.scheduler import EpisodeTask
from eval_runner.testing import FaultInjection
from rlinf_bench import errors
from rlinf_bench.contracts import Perturbation

if TYPE_CHECKING:
    from eval_runner.envs.kinds import Scene, SceneMaker

log = logging.getLogger(__name__)


class WorkerDied(Exception):
    """The worker process exited while the parent waited on it (internal; turned into a retry)."""


@dataclass(frozen=True)
class WorkerConfig:
    """Everything a worker needs; pickled to the child at spawn."""

    scenes: SceneMaker  # the env kind's scene builder (LiberoScenes, RoboTwinScenes, a test's stand-in)
    fault: FaultInjection | None = None
    log_level: int = logging.WARNING
    threads: int = 1  # per worker: one worker per core is the unit of parallelism


#: Thread pools a worker would otherwise size to the whole machine (OpenMP/BLAS, Mesa's llvmpipe renderer).
THREAD_ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "LP_NUM_THREADS")


def limit_threads(threads: int) -> None:
    """Cap this process's compute threads; N single-threaded workers on N cores beat oversubscription."""
    for var in THREAD_ENV_VARS:
        os.environ[var] = str(threads)


def worker_main(conn: Connection, config: WorkerConfig) -> None:  # pragma: no cover - runs in the child
    """Entry point of a worker process."""
    limit_threads(config.threads)  # before numpy/Mesa (and torch, if a scene hook loads it) size their pools
    # Ctrl-C goes to the whole process group: the parent decides how to stop, and closes us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=config.log_level, format="%(asctime)s %(levelname)s worker: %(message)s")
    logging.getLogger("OpenGL").setLevel(logging.WARNING)  # "No OpenGL_accelerate module" on every start
    try:
        _serve(conn, config)
    except (EOFError, KeyboardInterrupt):
        pass
    finally:
        conn.close()


def _serve(conn: Connection, config: WorkerConfig) -> None:  # pragma: no cover - runs in the child
    egl_device = egl_device_description()  # read before the scene maker's set-up may hide CUDA devices
    try:
        config.scenes.setup_worker()
    except errors.RlinfBenchError as exc:
        conn.send(("error", type(exc).__name__, str(exc)))
        return
    state = _WorkerState(config)
    try:
        while True:
            msg = conn.recv()
            if msg[0] == "close":
                return
            try:
                reply = state.handle(msg)
            except errors.RlinfBenchError as exc:
                reply = ("error", type(exc).__name__, str(exc))
            except Exception as exc:
                log.exception("worker error")
                if is_rendering_failure(exc):  # the parent restarts us once, then fails the run naming the device
                    reply = ("error", "RenderingError", describe_rendering_failure(exc, egl_device))
                else:  # a simulator bug: report it with its type, the parent fails the run
                    reply = ("error", "SimulatorError", f"{type(exc).__name__} in the simulator worker: {exc}")
            conn.send(reply)
    finally:
        state.close()


class _WorkerState:  # pragma: no cover - runs in the child
    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.scene: Scene | None = None
        self.task_id: int | None = None
        self.episode: EpisodeTask | None = None
        self.steps = 0
        self.frames: list[Any] = []

    def handle(self, msg: tuple[Any, ...]) -> tuple[Any, ...]:
        kind = msg[0]
        if kind == "start":
            return self.start(msg[1], msg[2])
        if kind == "load":
            return ("loaded", None, {"setup_s": self.load(msg[1], video=False)})
        if kind == "step":
            return self.step(msg[1], last=len(msg) > 2 and bool(msg[2]))
        if kind == "video":
            return ("ok", self.save_video(Path(msg[1])))
        raise errors.SimulatorError(f"worker got unknown message {kind!r}")

    def load(self, task_id: int, *, video: bool) -> float:
        """Build the task's scene unless it is built (with video frames when ``video``); the seconds spent."""
        if self.scene is not None and self.task_id == task_id and (not video or self.scene.records_video):
            return 0.0
        self.close()
        self.scene = self.config.scenes.make(task_id, video=video)
        self.task_id = task_id
        return float(self.scene.setup_s)

    def start(self, episode: EpisodeTask, settle_steps: int) -> tuple[Any, ...]:
        want_video = episode.record_video
        if self.config.fault is not None:
            self.config.fault.on_episode_start(episode.task_id, episode.init_state)
        setup_s = self.load(episode.task_id, video=want_video)
        scene = self.scene
        if scene is None:
            raise errors.SimulatorError(f"worker built no scene for task {episode.task_id} (runner bug)")
        t0 = time.perf_counter()
        start = scene.start_episode(episode, settle_steps)
        self.episode = episode
        self.steps = 0
        self.frames = [scene.video_frame()] if want_video else []
        info: dict[str, Any] = {"done": False, "setup_s": setup_s, "sim_s": time.perf_counter() - t0}
        # the next initial state's reset starts from here (the scheduler's chain, scheduler.py)
        info["rng_after_reset"] = start.next_start
        if start.seed is not None:
            info["seed"] = start.seed
        if start.instruction is not None:
            info["instruction"] = start.instruction
        if start.notes:
            info["notes"] = start.notes
        if start.perturbation is not None:
            info["perturbation"] = start.perturbation
        if start.refused is not None:
            info["refused"] = start.refused
        return ("obs", start.observation, info)

    def step(self, actions: Any, *, last: bool = False) -> tuple[Any, ...]:
        """Execute ``actions`` (one action or a ``[K, dim]`` chunk) until the last or the env's success; ``last``:
        the episode ends with them, so a failure's cause goes back with the reply.

        Only the observation sent back is rendered (every step when recording a video): inside a chunk
        the policy reads no images, and rendering cameras costs more than the physics of a step.
        """
        ep, scene = self.episode, self.scene
        if ep is None or scene is None:
            raise errors.SimulatorError("worker got a step before any episode started")
        chunk = np.asarray(actions, dtype=np.float64)
        chunk = chunk.reshape(1, -1) if chunk.ndim == 1 else chunk
        t0 = time.perf_counter()
        obs: dict[str, Any] = {}
        done = False
        taken = 0
        for i, action in enumerate(chunk):
            if self.config.fault is not None:
                self.config.fault.on_step(ep.task_id, ep.init_state, self.steps)
            # an observation without images needs no render: only a recorded episode renders (its video frames)
            returned = i == len(chunk) - 1 and scene.observation_needs_render
            obs, done = scene.step(action, render=ep.record_video or returned)
            self.steps += 1
            taken += 1
            if ep.record_video:
                self.frames.append(scene.video_frame())
            if done:
                break
        info: dict[str, Any] = {"done": done, "steps": taken, "sim_s": time.perf_counter() - t0}
        if last and not done:
            info["failure"] = scene.failure()
        return ("obs", obs, info)

    def save_video(self, path: Path) -> str:
        from eval_runner.video import write_video

        written = write_video(path, [f for f in self.frames if f is not None])
        self.frames = []
        return str(written)

    def close(self) -> None:
        if self.scene is not None:
            self.scene.close()
            self.scene = None
            self.task_id = None


class WorkerHandle:
    """The parent's side of one worker process."""

    def __init__(
        self,
        index: int,
        config: WorkerConfig,
        start_method: str = "spawn",
        target: Callable[[Connection, WorkerConfig], None] | None = None,
        *,
        start: bool = True,
    ) -> None:
        """``start=False`` leaves the process unstarted until :meth:`spawn` (a later wave of workers)."""
        self.index = index
        self.config = config
        self._target = target or worker_main  # tests pass a stand-in simulator
        self._ctx: Any = mp.get_context(start_method)
        self.process: Any = None
        self.conn: Connection | None = None
        self.episode: EpisodeTask | None = None  # what this worker is running
        self.pending: str | None = None  # "start"/"step": a reply is outstanding; "policy": its row is in a call
        self.steps = 0
        self.started_at = 0.0
        self.sent_at = 0.0  # monotonic time of the last request (for reply timeouts)
        self.answered = False  # whether this process ever replied (a death before means it never started)
        self.retry_count = 0
        self.loaded_task: int | None = None
        self.episode_seed: int | None = None  # the env seed its episode runs with, when the scene chose it
        self.instruction: str | None = None  # its episode's own instruction, when the scene worded one
        self.perturbation: Perturbation | None = None  # its perturbed episode's record, from the start
        self.restarts = 0
        self.render_failures = 0  # EGL/OpenGL failures; survives restarts (one restart is allowed)
        if start:
            self.spawn()

    @property
    def started(self) -> bool:
        """Whether the process was started (it may have died since)."""
        return self.process is not None

    def spawn(self) -> None:
        parent, child = self._ctx.Pipe(duplex=True)
        self.process = self._ctx.Process(
            target=self._target, args=(child, self.config), name=f"env-worker-{self.index}", daemon=True
        )
        self.process.start()
        child.close()
        self.conn = parent
        self.pending = None
        self.episode = None
        self.loaded_task = None
        self.answered = False

    def restart(self) -> None:
        """Replace a dead worker with a fresh process (its scene is rebuilt on the next start)."""
        self.kill()
        self.restarts += 1
        self.spawn()

    def send(self, msg: tuple[Any, ...]) -> None:
        if self.conn is None:
            raise WorkerDied(f"worker {self.index} has no connection")
        try:
            self.conn.send(msg)
            self.sent_at = time.monotonic()
        except (BrokenPipeError, ConnectionResetError, EOFError, OSError) as exc:
            raise WorkerDied(self.describe_exit()) from exc

    def recv(self) -> tuple[Any, ...]:
        if self.conn is None:
            raise WorkerDied(f"worker {self.index} has no connection")
        try:
            reply: tuple[Any, ...] = self.conn.recv()
        except (EOFError, ConnectionResetError, OSError) as exc:
            raise WorkerDied(self.describe_exit()) from exc
        self.answered = True
        if reply[0] == "error":
            raise _rebuild_error(reply[1], reply[2])
        return reply

    def describe_exit(self) -> str:
        proc = self.process
        why = f"worker {self.index} is gone"
        if proc is not None:
            proc.join(timeout=5)
            code = proc.exitcode
            why = (
                f"worker {self.index} was killed by signal {-code}"
                if code is not None and code < 0
                else (f"worker {self.index} exited with code {code}")
            )
        if not self.answered:
            why += (
                " before it ever answered, i.e. while starting (see its traceback above; a script that calls "
                "evaluate() needs an `if __name__ == '__main__':` guard because workers are spawned)"
            )
        return why

    def request_close(self) -> None:
        """Ask the worker to close its environment and exit (does not wait)."""
        if self.conn is not None:
            with contextlib.suppress(BrokenPipeError, OSError):
                self.conn.send(("close",))

    def close(self, timeout: float = 10.0) -> None:
        """Ask the worker to close its environment and exit; kill it if it does not in time."""
        self.request_close()
        if self.process is not None:
            self.process.join(timeout=timeout)
        self.kill()

    def kill(self) -> None:
        if self.process is not None and self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def close_all(workers: list[WorkerHandle], timeout: float = 10.0) -> None:
    """Close every worker: all are asked first, so they shut down in parallel, then waited for (or killed)."""
    for w in workers:
        w.request_close()
    deadline = time.monotonic() + timeout
    for w in workers:
        if w.process is not None:
            w.process.join(timeout=max(0.1, deadline - time.monotonic()))
        w.kill()


def egl_device_description() -> str:
    """Which GPU a worker renders on, for error messages (read before the worker hides CUDA devices)."""
    egl = os.environ.get("MUJOCO_EGL_DEVICE_ID")
    cuda = os.environ.get("CUDA_VISIBLE_DEVICES")
    where = f"EGL device {egl}" if egl else "the default EGL device (MUJOCO_EGL_DEVICE_ID unset)"
    return f"{where}, CUDA_VISIBLE_DEVICES={cuda}" if cuda else where


def is_rendering_failure(exc: BaseException) -> bool:
    """Whether an exception (or one it was raised from) comes from EGL/OpenGL context handling."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if type(cur).__module__.startswith("OpenGL") or "EGL" in str(cur):
            return True
        tb = cur.__traceback__
        while tb is not None:
            name = os.path.basename(tb.tb_frame.f_code.co_filename)
            if "egl" in name.lower() or "OpenGL" in tb.tb_frame.f_code.co_filename:
                return True
            tb = tb.tb_next
        cur = cur.__cause__ or cur.__context__
    return False


def describe_rendering_failure(exc: BaseException, device: str) -> str:
    """The EGL error and the device it happened on."""
    return f"rendering (EGL) failed on {device}: {type(exc).__name__}: {exc}"


def _rebuild_error(name: str, message: str) -> errors.RlinfBenchError:
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, errors.RlinfBenchError):
        return cls(message)
    return errors.SimulatorError(message)
