"""The time left of a running execution, from how fast its episodes finish once they have started to.

Elapsed time over episodes done counts the start-up (the stack, the Plan, probes, the workers' scene builds)
as if every episode cost a share of it: the first episodes then predict many times the real length (39-51 min
for a 7 min demo). Here the rate is measured from the first finished episode on, the estimate stays hidden
until enough episodes have finished after it, and the predicted end moves smoothly as the rate settles.
"""

from __future__ import annotations

import math

__all__ = ["EtaEstimate"]


class EtaEstimate:
    """Feed it each progress reading in turn (:meth:`update`); it answers the seconds left, or None.

    None until ``min_episodes`` (and ``min_share`` of all) episodes finished after the first one seen
    and ``min_span_s`` passed since: before that the rate is mostly the workers' first wave. The answer
    is an exponential average (weight ``smoothing`` for the newest reading) of the predicted end time.
    """

    def __init__(
        self, *, min_episodes: int = 3, min_share: float = 0.1, min_span_s: float = 20.0, smoothing: float = 0.3
    ) -> None:
        self.min_episodes = min_episodes
        self.min_share = min_share
        self.min_span_s = min_span_s
        self.smoothing = smoothing
        self._origin: tuple[float, int] | None = None
        self._end: float | None = None

    def update(self, now_s: float, done: int, total: int) -> float | None:
        """Seconds left at ``now_s`` (any clock that only moves forward) with ``done`` of ``total`` episodes."""
        if total <= 0 or done <= 0:
            return None
        if self._origin is None or done < self._origin[1]:  # the first finished episodes (or a restart)
            self._origin, self._end = (now_s, done), None
            return None
        if done >= total:
            return None  # every episode is in: what is left (aggregation, publishing) is not counted here
        start_s, start_done = self._origin
        gained, span = done - start_done, now_s - start_s
        if gained < max(self.min_episodes, math.ceil(self.min_share * total)) or span < self.min_span_s:
            return None
        end = now_s + (total - done) * span / gained
        self._end = end if self._end is None else self._end + self.smoothing * (end - self._end)
        return max(0.0, self._end - now_s)
