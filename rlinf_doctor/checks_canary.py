"""The simulator canary (``rlinf-bench doctor --only canary``): does the physics still behave as it did
when the reference was made?

The canary is played by the evaluation runner's own command in a child interpreter
(``python -m eval_runner.sim_canary --json``): doctor imports nothing of the runner, and a hang or a
crash of the simulator is a named failure with a time-out. It plays the scripted expert (simulator
access, not a learned policy) at noise 0 on 2 tasks x 2 initial states of LIBERO-Spatial and compares
each episode's fingerprint with the reference shipped in the package. It is opt-in (about a minute on
a CPU): the other areas' checks leave it out unless ``--only canary`` names it.
"""

from __future__ import annotations

import os
import subprocess
import sys

from rlinf_bench.doctor.context import DoctorContext
from rlinf_bench.doctor.model import CheckResult
from rlinf_doctor.checks_libero import INSTALL, _last_json, _package_dir, _tail

NAME = "canary.sim"
REGENERATE = "scripts/make_sim_canary_reference.py"


def _asked_for(ctx: DoctorContext) -> bool:
    return any(sel == "canary" or sel.startswith("canary.") for sel in ctx.only)


def check_sim_canary(ctx: DoctorContext) -> CheckResult:
    """Play the canary and compare it with the shipped reference; name the episodes that moved."""
    if not _asked_for(ctx):
        return ctx.skip(NAME, "opt-in (plays 4 LIBERO episodes, about a minute)", "rlinf-bench doctor --only canary")
    if _package_dir() is None:
        return ctx.problem(NAME, "LIBERO is not installed", INSTALL)
    env = dict(os.environ)
    env.setdefault("MUJOCO_GL", "egl")
    env.setdefault("PYOPENGL_PLATFORM", "egl")
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "eval_runner.sim_canary", "--json"],
            capture_output=True,
            text=True,
            timeout=ctx.canary_timeout_s,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return ctx.problem(
            NAME,
            f"the canary did not finish in {ctx.canary_timeout_s:.0f} s",
            "a loaded machine plays slower: raise RLINF_BENCH_CANARY_TIMEOUT_S, or check `doctor --only libero`",
        )
    doc = _last_json(proc.stdout)
    verdict = (doc or {}).get("verdict")
    if not isinstance(verdict, dict):
        return ctx.problem(NAME, f"the canary did not run: {_tail(proc.stderr)}", "see `doctor --only libero`")
    details = {k: verdict.get(k) for k in ("moved", "versions_here", "versions_reference")}
    if verdict.get("ok"):
        return ctx.ok(NAME, str(verdict.get("summary")), **details)
    moved = "; ".join(str(m) for m in verdict.get("moved") or [])
    return ctx.problem(
        NAME,
        f"{verdict.get('summary')}. Moved: {moved}",
        "scores measured here are not comparable with the baselines measured on the reference's versions: "
        f"install the pinned versions (make setup-main), or, after checking the new physics on purpose, "
        f"regenerate the reference with {REGENERATE}",
        **details,
    )
