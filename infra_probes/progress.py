"""Progress of a running probe, on stderr (stdout keeps the result): a probe can take minutes (the nccl sweep
on a CPU, the GPU probe's sampling window, a large storage file), and silence reads as a hang.

:class:`ProbeProgress` writes ``<probe>: still running, 20 s`` every ``every_s`` while nothing else was said;
a probe says more where it knows more (:func:`say`: the nccl probe's rank 0 writes one line per message size,
also from a spawned rank, which shares the terminal's stderr).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

__all__ = ["ProbeProgress", "say"]

_active: ProbeProgress | None = None


def say(probe: str, text: str, *, stream: TextIO | None = None) -> None:
    """One progress line ``<probe>: <text>`` on stderr, now; the running ticker (if any) waits a full interval."""
    out = stream or sys.stderr
    out.write(f"{probe}: {text}\n")
    out.flush()
    if _active is not None:
        _active.heard()


class ProbeProgress:
    """While the block runs, a line every ``every_s`` seconds in which nothing else was said.

    ``enabled=False`` (another rank than the reporting one) makes it a no-op.
    """

    def __init__(
        self,
        probe: str,
        *,
        every_s: float = 10.0,
        stream: TextIO | None = None,
        enabled: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.probe = probe
        self.every_s = every_s
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = self._last = clock()

    def heard(self) -> None:
        """Something was said: the next "still running" line is due a full interval from now."""
        self._last = self.clock()

    def _tick(self) -> None:
        while not self._stop.wait(min(1.0, self.every_s)):
            now = self.clock()
            if now - self._last >= self.every_s:
                say(self.probe, f"still running, {now - self._started:.0f} s", stream=self.stream)
                self._last = now

    def __enter__(self) -> ProbeProgress:
        global _active
        if self.enabled:
            self._started = self._last = self.clock()
            _active = self
            self._thread = threading.Thread(target=self._tick, name=f"{self.probe}-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        global _active
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if _active is self:
            _active = None
