"""Which episode runs next on which worker.

Every (task, initial state) pair is one queue entry. A worker prefers the next entry of the task whose
scene it already has loaded (building a LIBERO scene costs seconds), otherwise it takes the head of
the queue. A crashed episode goes back to the front so it is re-run promptly, with the same seed.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

from rlinf_bench.seeding import episode_seed


@dataclass(frozen=True)
class EpisodeTask:
    """One episode to run: a task's fixed initial state, with its derived seed."""

    task_id: int
    init_state: int
    seed: int
    attempt: int = 0  # 0 for the first run; +1 per re-run after a worker crash
    record_video: bool = False

    @property
    def key(self) -> tuple[int, int]:
        return (self.task_id, self.init_state)

    @property
    def episode_id(self) -> str:
        """Stable id of this attempt, given to the policy so it can keep per-episode state."""
        return f"t{self.task_id}-s{self.init_state}-a{self.attempt}"

    def retry(self) -> EpisodeTask:
        return replace(self, attempt=self.attempt + 1)


def plan_episodes(suite: str, run_seed: int, task_ids: list[int], trials: int, videos: int = 0) -> list[EpisodeTask]:
    """All episodes of a run in canonical order (task, then initial state); the first ``videos`` are recorded."""
    out: list[EpisodeTask] = []
    for task_id in task_ids:
        for i in range(trials):
            out.append(
                EpisodeTask(
                    task_id=task_id,
                    init_state=i,
                    seed=episode_seed(run_seed, suite, task_id, i),
                    record_video=len(out) < videos,
                )
            )
    return out


class Scheduler:
    """A queue of episodes with task affinity."""

    def __init__(self, episodes: list[EpisodeTask]) -> None:
        self._queue: deque[EpisodeTask] = deque(episodes)

    def __len__(self) -> int:
        return len(self._queue)

    def next_for(self, current_task: int | None) -> EpisodeTask | None:
        """The next episode for a worker whose loaded task is ``current_task`` (None: nothing loaded)."""
        if not self._queue:
            return None
        if current_task is not None:
            for idx, ep in enumerate(self._queue):
                if ep.task_id == current_task:
                    del self._queue[idx]
                    return ep
        return self._queue.popleft()

    def requeue_front(self, episode: EpisodeTask) -> None:
        """Put a crashed episode back so the next free worker re-runs it first."""
        self._queue.appendleft(episode)
