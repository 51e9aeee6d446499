"""The one canary runner: the simulator canary played in a child interpreter, its verdict read back typed.

The doctor's ``canary.sim`` check and the ``sim_canary`` probe both call :func:`run_in_child`. It runs the
evaluation runner's own command (``python -m eval_runner.sim_canary --json``) in a child process, so the caller
needs no simulator and imports nothing of the runner; a hang is stopped at the time-out, and every way the
canary can end without a verdict is a named error the caller turns into its own words and lever.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping

from pydantic import ValidationError

from rlinf_bench.doctor.canary import CanaryRun
from rlinf_bench.errors import SimulatorError

__all__ = ["CANARY_COMMAND", "CanaryNotRunError", "CanaryTimeoutError", "CanaryUnavailableError", "run_in_child"]

#: The canary's command after the interpreter: it prints one CanaryRun as a JSON line.
CANARY_COMMAND = ("-m", "eval_runner.sim_canary", "--json")


class CanaryNotRunError(SimulatorError):
    """The canary gave no verdict: it crashed, or printed none that reads."""


class CanaryTimeoutError(CanaryNotRunError):
    """The canary did not finish within its time-out."""


class CanaryUnavailableError(CanaryNotRunError):
    """The simulator is not installed where the canary was started (e.g. the probe image)."""


def run_in_child(timeout_s: float, *, env: Mapping[str, str] | None = None) -> CanaryRun:
    """Play the canary in a child interpreter and read its verdict back.

    Renders headless (EGL) unless ``env`` or the environment says otherwise. Raises
    :class:`CanaryTimeoutError` past ``timeout_s``, :class:`CanaryUnavailableError` where the simulator is
    missing, :class:`CanaryNotRunError` for any other exit without a readable verdict (with its last lines).
    """
    environ = {**os.environ, **(env or {})}
    environ.setdefault("MUJOCO_GL", "egl")
    environ.setdefault("PYOPENGL_PLATFORM", "egl")
    cmd = [sys.executable, *CANARY_COMMAND]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=environ, check=False)
    except subprocess.TimeoutExpired as exc:
        raise CanaryTimeoutError(f"the simulator canary did not finish in {timeout_s:g} s") from exc
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        tail = _tail(proc.stderr or proc.stdout)
        if "No module named" in tail:
            raise CanaryUnavailableError(f"the simulator is not installed here: {tail}")
        raise CanaryNotRunError(f"the simulator canary exited {proc.returncode} without a verdict: {tail}")
    try:
        return CanaryRun.model_validate_json(lines[-1])
    except ValidationError as exc:
        raise CanaryNotRunError(f"the simulator canary printed a verdict that does not read: {exc}") from exc


def _tail(text: str, lines: int = 3, chars: int = 600) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(kept[-lines:])[-chars:] or "no output"
