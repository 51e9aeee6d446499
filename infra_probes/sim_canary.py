"""Simulator canary: the scripted LIBERO expert at noise 0 on fixed episodes, against the shipped fingerprint.

Plays the canary through the one canary runner, :func:`rlinf_doctor.canary_runner.run_in_child` (a scripted
expert with simulator access, not a learned policy, in a child process, as the doctor's ``canary.sim`` check
does), so this package needs no simulator itself: the Job runs in the eval image, where LIBERO is. ``pass``
when every canary episode matches ``rlinf_bench/data/sim_canary_reference.json``;
``fail`` names the episodes that moved and the versions on both sides; ``not_available`` where LIBERO is
missing (the probe image). What it catches and what not: docs/doctor.md ("Simulator canary").
"""

from __future__ import annotations

import argparse

from pydantic import BaseModel, ConfigDict, Field

from infra_probes.common import Outcome, m
from infra_probes.environment import detect_environment
from rlinf_bench.contracts import ProbeEnvironment, Target
from rlinf_bench.doctor.canary import CanaryRun
from rlinf_bench.errors import ProbeError, ProbeUnavailableError
from rlinf_doctor.canary_runner import CanaryNotRunError, CanaryTimeoutError, CanaryUnavailableError, run_in_child

REFERENCE = "rlinf_bench/data/sim_canary_reference.json"
TARGET = Target(metric="moved_episodes", op="<=", value=0, unit="episodes", source=f"shipped reference ({REFERENCE})")


class SimCanarySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(default=900.0, gt=0, description="the canary's child process is stopped after this")
    instance_type: str | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout-s", type=float, default=900.0, help="stop the canary after this many seconds")


def settings_from_args(args: argparse.Namespace) -> SimCanarySettings:
    return SimCanarySettings(timeout_s=args.timeout_s, instance_type=args.instance_type)


def environment(settings: SimCanarySettings) -> ProbeEnvironment:
    return detect_environment(instance_type=settings.instance_type, with_gpu=False)


def run_canary(timeout_s: float) -> CanaryRun:
    """The canary's verdict and fingerprint, played in a child process."""
    try:
        return run_in_child(timeout_s)
    except CanaryTimeoutError as exc:
        raise ProbeError(f"{exc}: raise --timeout-s") from exc
    except CanaryUnavailableError as exc:
        raise ProbeUnavailableError(f"{exc} (run sim_canary in the eval image)") from exc
    except CanaryNotRunError as exc:
        raise ProbeError(str(exc)) from exc


def outcome_from(run: CanaryRun) -> Outcome:
    """The probe's outcome from the canary's run: moved episodes, versions on both sides."""
    verdict, fingerprint = run.verdict, run.fingerprint
    details = {
        "summary": verdict.summary,
        "moved": list(verdict.moved),
        "versions_here": verdict.versions_here,
        "versions_reference": verdict.versions_reference,
        "episodes": len(fingerprint.episodes),
    }
    return Outcome(
        values={
            "moved_episodes": m(len(verdict.moved), "episodes"),
            "episodes": m(len(fingerprint.episodes), "episodes"),
            "wall_s": m(fingerprint.wall_s, "s"),
        },
        target=TARGET,
        details=details,
        forced_fail=verdict.summary if verdict.moved else "",
    )


def measure(settings: SimCanarySettings) -> Outcome:
    return outcome_from(run_canary(settings.timeout_s))
