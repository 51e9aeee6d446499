"""Simulator canary: the scripted LIBERO expert at noise 0 on fixed episodes, against the shipped fingerprint.

Runs ``python -m eval_runner.sim_canary --json`` (a scripted expert with simulator access, not a learned
policy) in a child process, so this package needs no simulator itself: the Job runs in the eval image,
where LIBERO is. ``pass`` when every canary episode matches ``rlinf_bench/data/sim_canary_reference.json``;
``fail`` names the episodes that moved and the versions on both sides; ``not_available`` where LIBERO is
missing (the probe image). What it catches and what not: docs/doctor.md ("Simulator canary").
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from infra_probes.common import Outcome, m
from infra_probes.environment import detect_environment
from rlinf_bench.contracts import ProbeEnvironment, Target
from rlinf_bench.errors import ProbeError, ProbeUnavailableError

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


def run_canary(timeout_s: float) -> dict[str, Any]:
    """The canary's ``--json`` document (verdict and fingerprint), from a child process."""
    cmd = [sys.executable, "-m", "eval_runner.sim_canary", "--json"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ProbeError(f"the simulator canary ran past --timeout-s {timeout_s:g}; raise it") from exc
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        tail = (proc.stderr or proc.stdout).strip()[-600:]
        if "No module named" in tail:
            raise ProbeUnavailableError(f"LIBERO is not installed here (run sim_canary in the eval image): {tail}")
        raise ProbeError(f"the simulator canary exited {proc.returncode} without a verdict: {tail}")
    doc: dict[str, Any] = json.loads(lines[-1])
    return doc


def outcome_from(doc: dict[str, Any]) -> Outcome:
    """The probe's outcome from the canary's document: moved episodes, versions on both sides."""
    verdict, fingerprint = doc["verdict"], doc["fingerprint"]
    moved = list(verdict.get("moved", []))
    details = {
        "summary": verdict["summary"],
        "moved": moved,
        "versions_here": verdict["versions_here"],
        "versions_reference": verdict["versions_reference"],
        "episodes": len(fingerprint.get("episodes", [])),
    }
    return Outcome(
        values={
            "moved_episodes": m(len(moved), "episodes"),
            "episodes": m(len(fingerprint.get("episodes", [])), "episodes"),
            "wall_s": m(float(fingerprint.get("wall_s", 0.0)), "s"),
        },
        target=TARGET,
        details=details,
        forced_fail=verdict["summary"] if moved else "",
    )


def measure(settings: SimCanarySettings) -> Outcome:
    return outcome_from(run_canary(settings.timeout_s))
