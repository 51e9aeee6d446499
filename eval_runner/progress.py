"""Progress on stderr: episodes done, success rate so far, ETA (tqdm).

While the bar is open, log records that would go to the terminal go through ``tqdm.write`` instead
(:func:`tqdm.contrib.logging.logging_redirect_tqdm`): it clears the bar, writes the line and redraws
the bar below, so a log line never lands in the middle of the bar.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any


class Progress:
    """A tqdm bar over episodes; a no-op when disabled. On a non-terminal (Job logs) it updates rarely."""

    def __init__(
        self,
        total: int,
        *,
        desc: str,
        enabled: bool = True,
        initial_done: int = 0,
        initial_successes: int = 0,
        initial_uncounted: int = 0,
    ) -> None:
        """``total``: every episode of the run, perturbed ones included; ``initial_*``: a resumed run's finished
        episodes (``uncounted``: perturbed ones, outside the SR)."""
        self.total = total
        self.finished = initial_done + initial_uncounted  # every finished episode: the bar's count and its ETA's
        self.done = initial_done  # the standard ones: the success rate's
        self.successes = initial_successes
        self._bar: Any = None
        self._logs = contextlib.ExitStack()
        if enabled and total:
            from tqdm import tqdm
            from tqdm.contrib.logging import logging_redirect_tqdm

            interactive = sys.stderr.isatty()
            self._bar = tqdm(
                total=total,
                initial=self.finished,
                desc=desc,
                unit="ep",
                file=sys.stderr,
                dynamic_ncols=interactive,
                mininterval=0.5 if interactive else 30.0,
            )
            # The root logger's console handlers (logging.basicConfig's) write through the bar from now on.
            self._logs.enter_context(logging_redirect_tqdm(tqdm_class=tqdm))

    @property
    def success_rate(self) -> float:
        return self.successes / self.done if self.done else 0.0

    def episode_done(self, success: bool, *, counted: bool = True) -> None:
        """One more episode finished; ``counted=False`` (a perturbed episode) moves the bar but not the SR."""
        self.finished += 1
        if counted:
            self.done += 1
            self.successes += int(success)
        if self._bar is not None:
            self._bar.set_postfix_str(f"SR {self.success_rate:.1%} ({self.successes}/{self.done})", refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        """Close the bar and give the console log handlers back."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._logs.close()
