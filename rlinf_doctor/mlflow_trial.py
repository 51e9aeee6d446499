"""The trial run ``doctor`` writes into a user's MLflow store to prove write access, and what makes it not stay.

The run is deleted whatever happens after it was asked for: on success, on an exception (a time-out after the
server had created it), on Ctrl-C and on SIGTERM (while the run exists, a SIGTERM handler raises
KeyboardInterrupt so the clean-up runs; the previous handler is restored after). The run carries a one-off tag,
so a run whose create answer never arrived (interrupted or timed out in flight) is found by that tag and deleted
too. A signal that arrives during the clean-up is held until it is done. When deleting is refused, the run is
already named and described as a doctor trial, and the message gives its id and the command that deletes it.

MLflow deletes softly: a deleted run stays in the store's trash (hidden from the UI and searches) until
``mlflow gc`` purges it, as for any run deleted in MLflow.
"""

from __future__ import annotations

import signal
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Protocol

#: Tag that marks the trial run; its value is a one-off id, so an unanswered create can still be found.
TAG = "rlinf_bench.doctor"
RUN_NAME = "rlinf-bench-doctor-trial"
#: MLflow's run description (shown in the UI): what the run is, for a user who finds one left behind.
DESCRIPTION = "Trial run of `rlinf-bench doctor` (MLflow write access); it deletes it itself, safe to delete."


class RefusedError(Exception):
    """The store answered a create with an error: no run exists, nothing to clean up."""


class TrialStore(Protocol):
    """The three calls the trial needs from a tracking store (REST or MlflowClient)."""

    def create(self, tags: dict[str, str]) -> str:
        """Create the run with ``tags`` and ``RUN_NAME``; its id. RefusedError when the store says no."""

    def find(self, nonce: str) -> list[str]:
        """Ids of the active runs tagged ``TAG = nonce``."""

    def delete(self, run_id: str) -> None:
        """Delete the run; raise with the reason when that fails."""


@dataclass
class Trial:
    """What the trial did: the runs it made, which were deleted, which are left and why."""

    uri: str
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    left: dict[str, str] = field(default_factory=dict)
    error: str = ""  # why creating failed ("" when it answered)
    refused: bool = False  # the store answered the create with an error (no run was made)

    def leftover_fix(self) -> str:
        """How to delete what is left, naming each run id."""
        ids = ", ".join(self.left)
        commands = "; ".join(f"MLFLOW_TRACKING_URI={self.uri} mlflow runs delete --run-id {r}" for r in self.left)
        return f"delete the trial run(s) {ids} (named {RUN_NAME!r}): {commands}"

    def summary(self) -> str:
        """One sentence on the trial runs, for the interrupted message."""
        if self.left:
            reasons = "; ".join(f"{r}: {why}" for r, why in self.left.items())
            return f"could not delete the MLflow trial run ({reasons}): {self.leftover_fix()}"
        if self.deleted:
            return f"the MLflow trial run {', '.join(self.deleted)} was deleted"
        return "no MLflow trial run was left behind"


def write_trial(store: TrialStore, uri: str) -> Trial:
    """Create a tagged run in ``store``, then delete it, whatever interrupts in between.

    A KeyboardInterrupt (Ctrl-C, or SIGTERM while the run exists) is re-raised after the clean-up, with a note
    saying what became of the run (``rlinf-bench`` prints notes with "interrupted").
    """
    nonce = uuid.uuid4().hex
    trial = Trial(uri=uri)
    interrupted: KeyboardInterrupt | None = None
    with sigterm_raises():
        try:
            trial.created.append(store.create({TAG: nonce, "mlflow.note.content": DESCRIPTION}))
        except KeyboardInterrupt as exc:
            interrupted = exc
        except RefusedError as exc:
            trial.error, trial.refused = str(exc), True
        except Exception as exc:  # a time-out or a dropped connection: the server may have made the run
            trial.error = f"{type(exc).__name__}: {exc}"
        with signals_held() as held:
            _clean(store, nonce, trial)
    if interrupted is None and held:
        interrupted = KeyboardInterrupt(f"signal {held[0]}")
    if interrupted is not None:
        interrupted.add_note(trial.summary())
        raise interrupted
    return trial


def _clean(store: TrialStore, nonce: str, trial: Trial) -> None:
    """Delete the run made (by id, else found by its tag); what cannot be deleted goes to ``trial.left``."""
    if not trial.created and not trial.refused:
        try:
            trial.created = store.find(nonce)
        except Exception as exc:  # the store is gone too: nothing to search
            trial.error += f" (and searching for the run failed: {type(exc).__name__}: {exc})"
    for run_id in trial.created:
        try:
            store.delete(run_id)
        except Exception as exc:
            trial.left[run_id] = f"{type(exc).__name__}: {exc}"
        else:
            trial.deleted.append(run_id)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _in_main_thread() -> bool:
    # Python installs signal handlers only from the main thread; elsewhere the defaults stay.
    return threading.current_thread() is threading.main_thread()


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """While inside, SIGTERM raises KeyboardInterrupt (so ``finally`` runs); the previous handler after."""
    if not _in_main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


@contextmanager
def signals_held() -> Iterator[list[int]]:
    """SIGINT and SIGTERM are recorded, not acted on, while inside; the caller acts on them after."""
    held: list[int] = []
    if not _in_main_thread():
        yield held
        return
    previous = {sig: signal.signal(sig, lambda signum, frame: held.append(signum)) for sig in _SIGNALS}
    try:
        yield held
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


_SIGNALS = (signal.SIGINT, signal.SIGTERM)
