"""Which episode runs next on which worker, and from which numpy RNG state its reset starts.

Every (task, initial state) pair is one queue entry. A worker prefers the next entry of the task whose
scene it already has loaded (building a LIBERO scene costs seconds), otherwise it takes the head of
the queue. A crashed episode goes back to the front so it is re-run promptly, from the same RNG state.

Reference RNG replay (``RNG_SCHEME``): OpenVLA-OFT's script builds one env per task, calls
``env.seed(s)`` once and resets it for episode after episode. LIBERO's ``reset()`` draws fixture
placements from numpy's global RNG, so its episode *i* starts from the RNG state that the *i* resets
before it left behind. We replay exactly that: episode *i* of a run with seed *s* restores the state
numpy has before the *i*-th reset after ``np.random.seed(s)``, and its env holds the articulation samplers
that the reference env holds at its *i*-th reset (v2; :meth:`LiberoEnv._reset_as_reference`). State 0 is known from the seed alone;
state *i+1* is what the reset of episode *i* leaves, which its worker reports back
(:meth:`Scheduler.record_reset`). An episode whose state is not known yet is started from the nearest
earlier known state, and the worker performs the missing resets first (:class:`RngStart`). Either way
the episode is the reference's, whatever the worker count or order.

The chain itself belongs to the env kind (:class:`eval_runner.envs.kinds.EnvRun`): LIBERO's links are
numpy RNG states; RoboTwin's are the seed its next expert-checked walk starts from. The scheduler only
knows that state 0 follows from the run seed (``first_state``) and that each reset reports the next one.

Replayed resets are wasted CPU (one task's first wave on 15 workers replayed 105 of them, ~1.2 s each,
while the other workers stepped), so a free worker *waits* rather than replay when a reset now in
flight will make a state known: the first wave of one task then starts staggered by one reset each,
and no core is spent on replays. It replays only when nothing it could take will become known. While
it waits, it builds the scene of the task whose reset it waits for (:meth:`Scheduler.task_to_prepare`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from eval_runner.perturbations.draw import AxisLevel

if TYPE_CHECKING:
    from rlinf_bench.contracts.robustness import RobustnessSpec

#: Recorded in every RunResult: how episodes were seeded (see the module docstring and docs/evaluation.md).
RNG_SCHEME = "reference-replay-v2"

#: numpy's legacy global RNG state, as ``np.random.get_state()`` returns it.
RngState = tuple[Any, ...]


def seeded_state(seed: int) -> RngState:
    """The global RNG state right after ``np.random.seed(seed)`` (what LIBERO's ``env.seed`` does)."""
    state: RngState = np.random.RandomState(seed).get_state(legacy=True)  # type: ignore[assignment]
    return state


@dataclass(frozen=True)
class RngStart:
    """Where an episode's reset starts: the chain's state before reset ``base_index`` of run seed ``seed``
    (LIBERO: numpy's RNG state after ``env.seed(seed)`` and that many resets; RoboTwin: a candidate seed).

    When ``base_index`` is below the episode's initial state, the worker first performs the resets in
    between (each from the state the previous one left), exactly as the reference loop would have.
    """

    seed: int
    base_index: int
    state: Any = field(repr=False, compare=False)


@dataclass(frozen=True)
class EpisodeTask:
    """One episode to run: a task's fixed initial state, with the run seed its env is seeded with."""

    task_id: int
    init_state: int
    seed: int
    attempt: int = 0  # 0 for the first run; +1 per re-run after a worker crash
    record_video: bool = False
    rng: RngStart | None = None  # set by the Scheduler when the episode is handed out
    #: a perturbed episode's axis and level (its twin: the standard episode of the same initial state); None:
    #: a standard episode
    perturbation: AxisLevel | None = None

    @property
    def key(self) -> tuple[int, int, str]:
        """(task, initial state, perturbation tag or ""): one per episode of a run."""
        return (self.task_id, self.init_state, self.perturbation.tag if self.perturbation else "")

    @property
    def episode_id(self) -> str:
        """Stable id of this attempt, given to the policy so it can keep per-episode state
        (``t0-s3-a0``; a perturbed episode's names its axis and level, ``t0-s3-camera2-a0``)."""
        tag = f"-{self.perturbation.tag}" if self.perturbation else ""
        return f"t{self.task_id}-s{self.init_state}{tag}-a{self.attempt}"

    def retry(self) -> EpisodeTask:
        return replace(self, attempt=self.attempt + 1)


def plan_episodes(
    suite: str, run_seed: int, task_ids: list[int], trials: int, robustness: RobustnessSpec | None = None
) -> list[EpisodeTask]:
    """All episodes of a run in canonical order (task, then initial state); which record a video is decided
    as each starts (:mod:`eval_runner.rollout_videos`).

    Every episode's env is seeded with the run seed: which reset of the reference loop it replays is
    its initial state index (``suite`` is kept for the call signature's stability). With ``robustness``,
    each task's perturbed episodes follow its standard ones (:meth:`RobustnessSpec.task_plan`), each from
    the same reset as its twin.
    """
    del suite
    out: list[EpisodeTask] = []
    for task_id in task_ids:
        for i in range(trials):
            out.append(EpisodeTask(task_id=task_id, init_state=i, seed=run_seed))
        if robustness is None:
            continue
        for i, axis, level in robustness.task_plan(task_id, trials):
            out.append(EpisodeTask(task_id, i, run_seed, perturbation=AxisLevel(axis, level)))
    return out


class Scheduler:
    """A queue of episodes with task affinity and the per-task chain of reference RNG states."""

    def __init__(
        self,
        episodes: list[EpisodeTask],
        *,
        first_state: Callable[[int], Any] = seeded_state,
        known: Mapping[tuple[int, int], Mapping[int, Any]] | None = None,
    ) -> None:
        """``first_state(seed)``: the chain's state before initial state 0 (LIBERO's: :func:`seeded_state`).
        ``known``: (task, seed) -> {initial state: its state}, states an earlier attempt already found."""
        self._queue: deque[EpisodeTask] = deque(episodes)
        self._first_state = first_state
        # (task, seed) -> {reset index: the chain's state before that reset}
        self._states: dict[tuple[int, int], dict[int, Any]] = {key: dict(chain) for key, chain in (known or {}).items()}
        # episodes handed out whose reset has not been reported yet: (task, seed, init_state, perturbation tag)
        self._resetting: set[tuple[int, int, int, str]] = set()

    def __len__(self) -> int:
        return len(self._queue)

    def next_for(self, current_task: int | None) -> EpisodeTask | None:
        """The next episode for a worker whose loaded task is ``current_task`` (None: nothing loaded).

        Preference: an episode of the loaded task whose RNG state is known; then, if a reset of that task
        is in flight, nothing yet (wait for it); then the first episode in queue order whose state is
        known (a scene build); then, if any reset is in flight, nothing yet; only then an episode that
        needs replayed resets (the loaded task's, else the queue head). Known states avoid extra resets
        on the worker; the loaded task avoids a scene build. ``None`` with episodes queued means "ask again
        after the next reset is reported" (:meth:`waiting`).
        """
        if not self._queue:
            return None
        pick: int | None = None
        same: list[int] = []
        if current_task is not None:
            same = [i for i, ep in enumerate(self._queue) if ep.task_id == current_task]
            pick = next((i for i in same if self._known(self._queue[i])), None)
            if pick is None and same and self._resetting_task(current_task):
                return None
        if pick is None:
            pick = next((i for i, ep in enumerate(self._queue) if self._known(ep)), None)
        if pick is None:
            if self._resetting:
                return None
            pick = same[0] if same else 0
        ep = self._queue[pick]
        del self._queue[pick]
        self._resetting.add(_in_flight(ep))
        return self._with_rng(ep)

    def waiting(self) -> bool:
        """Whether episodes are queued although :meth:`next_for` gave none (they wait for a reset in flight)."""
        return bool(self._queue)

    def task_to_prepare(self, held: Mapping[int, int]) -> int | None:
        """The task whose scene a free worker should build while it waits; None when no wait will end.

        A worker that :meth:`next_for` leaves waiting has nothing to do until a reset in flight makes
        a state known, and then it would still have to build that task's scene. Building it while it
        waits takes the build off the path to its first observation. The candidates are the tasks that
        have queued episodes and a reset in flight, in queue order. The one chosen has the fewest idle
        workers already holding its scene (``held``: task -> count), so waiting workers spread over the
        tasks instead of queueing on one task's chain.
        """
        resetting = {task for task, _, _, _ in self._resetting}
        candidates = dict.fromkeys(ep.task_id for ep in self._queue if ep.task_id in resetting)  # queue order
        return min(candidates, key=lambda t: held.get(t, 0)) if candidates else None

    def queued(self, task_id: int) -> bool:
        """Whether episodes of ``task_id`` are still queued."""
        return any(ep.task_id == task_id for ep in self._queue)

    def requeue_front(self, episode: EpisodeTask) -> None:
        """Put a crashed episode back so the next free worker re-runs it first."""
        self._resetting.discard(_in_flight(episode))
        self._queue.appendleft(episode)

    def record_reset(self, episode: EpisodeTask, state_after: Any) -> None:
        """Note the RNG state the reset of ``episode`` left: the state before the next initial state's reset.

        A perturbed episode's reset is its twin's (perturbations apply after it and draw from their own
        generator), so it reports the same state."""
        self._resetting.discard(_in_flight(episode))
        if state_after is None:
            return
        self._chain(episode).setdefault(episode.init_state + 1, state_after)

    # -- internals ----------------------------------------------------------------------------------
    def _chain(self, ep: EpisodeTask) -> dict[int, Any]:
        chain = self._states.setdefault((ep.task_id, ep.seed), {})
        if 0 not in chain:
            chain[0] = self._first_state(ep.seed)
        return chain

    def _resetting_task(self, task_id: int) -> bool:
        return any(t == task_id for t, _, _, _ in self._resetting)

    def _known(self, ep: EpisodeTask) -> bool:
        return ep.init_state in self._chain(ep)

    def _with_rng(self, ep: EpisodeTask) -> EpisodeTask:
        chain = self._chain(ep)
        base = max(i for i in chain if i <= ep.init_state)
        return replace(ep, rng=RngStart(seed=ep.seed, base_index=base, state=chain[base]))


def _in_flight(ep: EpisodeTask) -> tuple[int, int, int, str]:
    return (ep.task_id, ep.seed, ep.init_state, ep.key[2])
