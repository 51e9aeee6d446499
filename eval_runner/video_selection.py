"""Which episodes keep their video: up to N per task, failures first, then successes.

An episode's outcome is known only when it ends, and recording must start with it (every step is
rendered). So the rollout records every episode of a task whose kept set could still change, keeps the
frames of the one running episode per worker in memory, and decides at its end with the outcome known:

- a task records while it has fewer than N kept failures (with N failures kept, nothing can improve);
- a failure is kept while fewer than N are kept, or displaces a kept success (the latest one);
- a success is kept only while fewer than N are kept.

Memory is bounded by one episode's frames per worker, disk by N videos per task (a displaced video is
deleted at once). Which failures are kept depends on the order episodes end in, which with several workers
is not fixed; the outcomes themselves are not affected. Videos of a resumed run's earlier episodes count
as kept and are never displaced (they may live in S3, written by an earlier attempt).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["KeepDecision", "VideoSelector"]


@dataclass(frozen=True)
class KeepDecision:
    """What to do with a finished recorded episode: keep its video, and whose video to delete for it."""

    keep: bool
    displaced: int | None = None  # initial state of the kept success whose video this one replaces


@dataclass
class _Kept:
    init_state: int
    success: bool
    fixed: bool  # a resumed episode's video: never displaced


@dataclass
class VideoSelector:
    """Per-task selection of at most ``per_task`` videos, failures first (see the module docstring)."""

    per_task: int
    _kept: dict[int, list[_Kept]] = field(default_factory=dict)

    def seed(self, task_id: int, init_state: int, success: bool) -> None:
        """Count an earlier attempt's video (a resumed run) as kept, for good."""
        self._kept.setdefault(task_id, []).append(_Kept(init_state, success, fixed=True))

    def wants(self, task_id: int) -> bool:
        """Whether the next episode of ``task_id`` should be recorded: its video could still be kept."""
        failures = sum(not k.success for k in self._kept.get(task_id, []))
        return self.per_task > 0 and failures < self.per_task

    def offer(self, task_id: int, init_state: int, success: bool) -> KeepDecision:
        """Decide on a recorded episode that just ended; the kept set is updated accordingly."""
        kept = self._kept.setdefault(task_id, [])
        if len(kept) < self.per_task:
            kept.append(_Kept(init_state, success, fixed=False))
            return KeepDecision(keep=True)
        if success:
            return KeepDecision(keep=False)
        # A failure with the set full: it replaces the latest success that is not fixed, if any.
        for i in range(len(kept) - 1, -1, -1):
            if kept[i].success and not kept[i].fixed:
                displaced = kept.pop(i).init_state
                kept.append(_Kept(init_state, success, fixed=False))
                return KeepDecision(keep=True, displaced=displaced)
        return KeepDecision(keep=False)

    def kept(self, task_id: int) -> list[int]:
        """Initial states whose videos are kept for ``task_id``, failures first, each in the order kept."""
        items = self._kept.get(task_id, [])
        return [k.init_state for k in items if not k.success] + [k.init_state for k in items if k.success]
