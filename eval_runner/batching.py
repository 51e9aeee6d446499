"""When to call the policy, and calling it off the rollout loop's thread.

The rollout used to call the policy once per *vector step*: it waited for every stepping worker, then
sent the batch. GPU rendering times vary from process to process, so every worker waited for the
slowest one at every step (harness/raw 0.69-0.77 on one H200). Now a batch is whatever observations
are ready when the policy is free, cut at ``max_batch`` rows or after waiting ``window_s`` for more;
the call runs on a background thread (:class:`PolicyCaller`) while the other workers keep stepping,
and its actions go to exactly the workers whose rows were in it. An episode's actions still depend
only on its own observations, so for a policy whose rows are independent the results do not depend
on the worker count or on timing.
"""

from __future__ import annotations

import contextlib
import queue
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from eval_runner.policies.base import Policy


@dataclass(frozen=True)
class BatchPolicy:
    """When a batch of ready observations is sent to the policy."""

    window_s: float = 0.0  # wait at most this long after the oldest ready row for more rows
    max_batch: int | None = None  # rows per call (None: no cap)

    def due(self, ready: int, oldest_ready_at: float, more_coming: bool, now: float) -> bool:
        """Whether to call the policy now with ``ready`` rows.

        ``more_coming``: some worker is stepping and will add a row. Without one, waiting gains nothing.
        """
        if ready == 0:
            return False
        if self.max_batch is not None and ready >= self.max_batch:
            return True
        if not more_coming:
            return True
        return now - oldest_ready_at >= self.window_s

    def wait_s(self, oldest_ready_at: float, now: float) -> float:
        """How long the loop may block before the window of the oldest ready row closes."""
        return max(0.0, oldest_ready_at + self.window_s - now)


@dataclass
class CallResult:
    """What one policy call returned (``actions``) or raised (``error``), with its duration."""

    tag: Any
    rows: int
    actions: Any = None
    error: BaseException | None = None
    elapsed_s: float = 0.0


class PolicyCaller:
    """Runs policy calls on daemon threads, up to ``slots`` at once, and wakes the loop when one is done.

    ``slots`` is the policy's ``concurrent_calls`` (1 unless it says otherwise: an in-process model serves
    one batch at a time; ``server:`` sends each call on its own connection). With more than one slot the
    loop sends the next ready rows while a call is out, so a policy server always has the next batch
    queued and its GPU does not wait for the round trip. A call's resets travel with it only for the
    episodes whose rows it carries (``act_with_resets``), so no reset can overtake its episode's first
    batch, whatever order the calls arrive in.

    The loop waits on :attr:`wake` together with the workers' pipes (``multiprocessing.connection.wait``
    accepts sockets), so a finished call and a worker's reply are handled in arrival order; each finished
    call leaves one byte there, so two calls finishing together wake the loop twice. Daemon, so a policy
    stuck in a call cannot keep the process alive after the run gave up on it.
    """

    def __init__(self, policy: Policy, slots: int | None = None) -> None:
        self.policy = policy
        self.slots = max(1, int(slots if slots is not None else getattr(policy, "concurrent_calls", 1)))
        if self.slots > 1 and not callable(getattr(policy, "act_with_resets", None)):
            self.slots = 1  # reset() then act() from two threads could pair one call's resets with another's rows
        self._requests: queue.SimpleQueue[tuple[Any, list[str], dict[str, Any], int] | None] = queue.SimpleQueue()
        self._done: list[CallResult] = []
        self._lock = threading.Lock()
        self._unsent_resets: list[str] = []  # episodes announced whose first row has not been sent yet
        self.wake, self._notify = socket.socketpair()
        self.wake.setblocking(False)
        self.in_flight = 0
        self._threads = [
            threading.Thread(target=self._serve, name=f"policy-call-{i}", daemon=True) for i in range(self.slots)
        ]
        for thread in self._threads:
            thread.start()

    @property
    def busy(self) -> bool:
        """Every slot has a call out: the next batch has to wait."""
        return self.in_flight >= self.slots

    def submit(self, tag: Any, resets: list[str], batch: dict[str, Any], rows: int) -> None:
        """Start a call: ``policy.reset(resets)`` (when any), then ``policy.act(batch)``."""
        if self.busy:
            raise RuntimeError(f"all {self.slots} policy call slots are in flight (runner bug)")
        self.in_flight += 1
        if self.slots > 1:
            # Only the resets of episodes in this batch go with it; the others wait for their episode's row.
            pending = self._unsent_resets + [str(e) for e in resets]
            ids = {str(e) for e in batch.get("episode_id", [])}
            resets = [e for e in pending if e in ids]
            self._unsent_resets = [e for e in pending if e not in ids]
        self._requests.put((tag, resets, batch, rows))

    def collect(self) -> CallResult | None:
        """One finished call, once a thread signalled it (else None)."""
        with contextlib.suppress(BlockingIOError):
            self.wake.recv(1)
        with self._lock:
            done = self._done.pop(0) if self._done else None
        if done is not None:
            self.in_flight -= 1
        return done

    def _call(self, resets: list[str], batch: dict[str, Any]) -> Any:
        if self.slots > 1:
            return self.policy.act_with_resets(resets, batch)  # type: ignore[attr-defined]
        if resets:
            self.policy.reset(resets)
        return self.policy.act(batch)

    def _serve(self) -> None:
        while (item := self._requests.get()) is not None:
            tag, resets, batch, rows = item
            result = CallResult(tag=tag, rows=rows)
            t0 = time.perf_counter()
            try:
                result.actions = self._call(resets, batch)
            except BaseException as exc:  # handed to the loop, which decides what it means
                result.error = exc
            result.elapsed_s = time.perf_counter() - t0
            with self._lock:
                self._done.append(result)
            try:
                self._notify.send(b"x")
            except OSError:  # the loop closed us while the call ran
                return

    def close(self) -> None:
        """Stop the threads after the calls in flight (if any); never waits for a stuck policy."""
        for _ in self._threads:
            self._requests.put(None)
        for thread in self._threads:
            thread.join(timeout=0.0 if self.in_flight else 5.0)
        self._notify.close()
        self.wake.close()


@dataclass
class SteppingClock:
    """Each worker's stepping phases (from its episode's first observation to its last step), summed.

    Steps per second of stepping time, summed over the workers, is the harness's steady rate: what N
    processes stepping the simulator on their own would give, minus what the loop makes workers wait
    (IPC, batching, the policy). Resets and scene builds are not in it, and it needs no moment at which
    every worker steps at once (with 15 workers some worker is almost always resetting).
    """

    workers: int
    seconds: float = 0.0  # summed over workers
    steps: int = 0
    sim_s: float = 0.0  # the workers' own env.step time in those phases
    _open: dict[int, list[float]] = field(default_factory=dict)  # worker -> [since, steps, sim_s]

    def begin(self, worker: int, now: float) -> None:
        self._open[worker] = [now, 0.0, 0.0]

    def step(self, worker: int, sim_s: float, steps: int = 1) -> None:
        phase = self._open.get(worker)
        if phase is not None:
            phase[1] += steps
            phase[2] += sim_s

    def end(self, worker: int, now: float) -> None:
        phase = self._open.pop(worker, None)
        if phase is not None:
            self.seconds += now - phase[0]
            self.steps += int(phase[1])
            self.sim_s += phase[2]

    def discard(self, worker: int) -> None:
        """A crashed episode's phase does not count."""
        self._open.pop(worker, None)


@dataclass
class OccupancyWindow:
    """The stretch of a run in which every worker had an episode: from the moment the last worker got its
    first observation to the moment the first worker found the queue empty.

    Env steps per second in it compare with N processes running the reference loop (reset, settle,
    steps) on their own: resets, settle steps and the RNG replay are in both, while the start-up
    (process spawn, scene builds) and the last partial wave, which a longer run amortises, are in neither.
    """

    workers: int
    _started: set[int] = field(default_factory=set)
    full_at: float | None = None  # (time, env steps so far) when the last worker started
    full_steps: int = 0
    idle_at: float | None = None
    idle_steps: int = 0

    def worker_started(self, worker: int, now: float, env_steps: int) -> None:
        if self.full_at is not None or self.idle_at is not None:
            return
        self._started.add(worker)
        if len(self._started) == self.workers:
            self.full_at, self.full_steps = now, env_steps

    def worker_idle(self, now: float, env_steps: int) -> None:
        if self.idle_at is None:
            self.idle_at, self.idle_steps = now, env_steps

    def figures(self) -> tuple[float, int] | None:
        """(seconds, env steps) of the window, or None when the queue ran dry before every worker started."""
        if self.full_at is None or self.idle_at is None or self.idle_at <= self.full_at:
            return None
        return self.idle_at - self.full_at, self.idle_steps - self.full_steps
