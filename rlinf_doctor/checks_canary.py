"""The simulator canary (``rlinf-bench doctor --only canary``): does the physics still behave as it did
when the reference was made?

The canary is played by the evaluation runner's own command in a child interpreter, through the one canary
runner the ``sim_canary`` probe uses too (:func:`rlinf_doctor.canary_runner.run_in_child`): doctor imports
nothing of the runner or the simulator, and a hang or a crash of the simulator is a named failure with a
time-out. It plays the scripted expert (simulator access, not a learned policy) at noise 0 on 2 tasks x 2
initial states of LIBERO-Spatial and compares each episode's fingerprint with the reference shipped in the
package. It is opt-in (about a minute on
a CPU): the other areas' checks leave it out unless ``--only canary`` names it.
"""

from __future__ import annotations

from rlinf_bench.doctor.context import DoctorContext
from rlinf_bench.doctor.model import CheckResult
from rlinf_doctor.canary_runner import CanaryNotRunError, CanaryTimeoutError, CanaryUnavailableError, run_in_child
from rlinf_doctor.checks_libero import INSTALL, _package_dir

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
    try:
        run = run_in_child(ctx.canary_timeout_s)
    except CanaryTimeoutError as exc:
        return ctx.problem(
            NAME,
            str(exc),
            "a loaded machine plays slower: raise RLINF_BENCH_CANARY_TIMEOUT_S, or check `doctor --only libero`",
        )
    except CanaryUnavailableError as exc:
        return ctx.problem(NAME, str(exc), INSTALL)
    except CanaryNotRunError as exc:
        return ctx.problem(NAME, f"the canary did not run: {exc}", "see `doctor --only libero`")
    verdict = run.verdict
    details = {
        "moved": verdict.moved,
        "versions_here": verdict.versions_here,
        "versions_reference": verdict.versions_reference,
    }
    if verdict.ok:
        return ctx.ok(NAME, verdict.summary, **details)
    return ctx.problem(
        NAME,
        f"{verdict.summary}. Moved: {'; '.join(verdict.moved)}",
        "scores measured here are not comparable with the baselines measured on the reference's versions: "
        f"install the pinned versions (make setup-main), or, after checking the new physics on purpose, "
        f"regenerate the reference with {REGENERATE}",
        **details,
    )
