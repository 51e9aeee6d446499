"""Which episodes keep their video: up to N per task, failures first, one per failure reason, then successes.

An episode's outcome is known only when it ends, and recording must start with it (every step is
rendered). So the rollout records every episode of a task whose kept set could still change, keeps the
frames of the one running episode per worker in memory, and decides at its end with the outcome known:

- a task records while it has fewer than N kept failures, or while two of its kept failures share a failure
  reason, for at most :data:`SEARCH_FACTOR` x N recorded episodes in all (the search for another reason is
  bounded: a recorded episode renders every step);
- a failure is kept while fewer than N are kept, or displaces a kept success (the latest one), or, when its
  reason is not among the kept failures', the latest kept failure whose reason another kept failure shares;
- a success is kept only while fewer than N are kept.

Memory is bounded by one episode's frames per worker, disk by N videos per task (a displaced video is
deleted at once). An episode is named by its key within its task: its initial state for a standard episode;
the rollout keeps perturbed episodes in a selector of their own, keyed by initial state, axis and level. Which failures are kept depends on the order episodes end in, which with several workers
is not fixed; the outcomes themselves are not affected. Videos of a resumed run's earlier episodes count
as kept and are never displaced (they may live in S3, written by an earlier attempt).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

__all__ = ["SEARCH_FACTOR", "KeepDecision", "VideoSelector"]

#: A task whose kept failures repeat a reason records up to this many times N episodes, looking for another.
SEARCH_FACTOR = 5


@dataclass(frozen=True)
class KeepDecision:
    """What to do with a finished recorded episode: keep its video, and whose video to delete for it."""

    keep: bool
    displaced: Hashable | None = None  # key of the kept episode whose video this one replaces


@dataclass
class _Kept:
    episode: Hashable  # its key within the task (a standard episode's: its initial state)
    success: bool
    fixed: bool  # a resumed episode's video: never displaced
    reason: str | None = None  # a failure's reason (None: a success, or an episode from before reasons)


@dataclass
class VideoSelector:
    """Per-task selection of at most ``per_task`` videos, failures first (see the module docstring)."""

    per_task: int
    _kept: dict[int, list[_Kept]] = field(default_factory=dict)
    _recorded: dict[int, int] = field(default_factory=dict)  # recorded episodes offered, per task

    def seed(self, task_id: int, episode: Hashable, success: bool, reason: str | None = None) -> None:
        """Count an earlier attempt's video (a resumed run) as kept, for good."""
        self._kept.setdefault(task_id, []).append(_Kept(episode, success, fixed=True, reason=reason))

    def wants(self, task_id: int) -> bool:
        """Whether the next episode of ``task_id`` should be recorded: its video could still be kept."""
        if self.per_task <= 0:
            return False
        failures = [k for k in self._kept.get(task_id, []) if not k.success]
        if len(failures) < self.per_task:
            return True
        searching = self._recorded.get(task_id, 0) < SEARCH_FACTOR * self.per_task
        return searching and _repeated(failures) is not None

    def offer(self, task_id: int, episode: Hashable, success: bool, reason: str | None = None) -> KeepDecision:
        """Decide on a recorded episode that just ended (``reason``: a failure's); the kept set is updated."""
        self._recorded[task_id] = self._recorded.get(task_id, 0) + 1
        kept = self._kept.setdefault(task_id, [])
        new = _Kept(episode, success, fixed=False, reason=reason)
        if len(kept) < self.per_task:
            kept.append(new)
            return KeepDecision(keep=True)
        if success:
            return KeepDecision(keep=False)
        # A failure with the set full: it replaces the latest success that is not fixed, if any ...
        for i in range(len(kept) - 1, -1, -1):
            if kept[i].success and not kept[i].fixed:
                displaced = kept.pop(i).episode
                kept.append(new)
                return KeepDecision(keep=True, displaced=displaced)
        # ... or, with a reason no kept video shows, the latest failure whose reason another one shows.
        failures = [k for k in kept if not k.success]
        repeated = _repeated(failures)
        if reason is None or repeated is None or any(k.reason == reason for k in failures):
            return KeepDecision(keep=False)
        kept.remove(repeated)
        kept.append(new)
        return KeepDecision(keep=True, displaced=repeated.episode)

    def kept(self, task_id: int) -> list[Hashable]:
        """Keys of the episodes whose videos are kept for ``task_id``, failures first, each in the order kept."""
        items = self._kept.get(task_id, [])
        return [k.episode for k in items if not k.success] + [k.episode for k in items if k.success]


def _repeated(failures: list[_Kept]) -> _Kept | None:
    """The latest kept failure (not fixed) whose reason an earlier kept failure has too, if any."""
    for i in range(len(failures) - 1, -1, -1):
        k = failures[i]
        if not k.fixed and k.reason is not None and any(o.reason == k.reason for o in failures[:i]):
            return k
    return None
