"""Simulator canary: the scripted expert at noise 0 on a fixed set of episodes, fingerprinted.

``python -m eval_runner.sim_canary [--json] [--reference FILE]`` plays ``builtin:expert`` (a scripted
expert with simulator access, not a learned policy) without noise on :data:`CANARY` and compares each
episode's fingerprint with the reference shipped in ``rlinf_bench/data/sim_canary_reference.json``
(made by ``scripts/make_sim_canary_reference.py`` on the pinned versions):

- ``success`` and ``steps`` (to success, else the horizon);
- at fixed steps, the sha256 of the MuJoCo state (``qpos``: the robot's joints and every object's
  pose; ``qvel``) rounded to :data:`DECIMALS` decimals (1 mm, 1 mrad, 1 mm/s).

Nothing is random: the expert draws nothing at noise 0 and the scene is reset from the reference RNG
state, so on the same versions and CPU the fingerprint repeats exactly. A mismatch names the episodes that
moved (first step whose state differs) and the versions on both sides. What it catches and what not:
docs/doctor.md ("Simulator canary").

``--perturb timestep=0.0025`` or ``--perturb control_freq=25`` changes one physics setting after each
reset: it exists to show (and test) that the canary notices.

:func:`run_in_child` is the one way to play it from elsewhere (the ``sim_canary`` probe, the doctor's
``canary.sim`` check): this command in a child interpreter, stopped after a time-out, its verdict read back
as a :class:`CanaryRun`. The caller needs no simulator, and a hang or crash of the simulator is a named error.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rlinf_bench.errors import SimulatorError

#: The versions the fingerprint depends on (recorded on both sides of a comparison).
VERSIONED = ("mujoco", "robosuite", "rlinf-libero", "numpy")
DECIMALS = 3
REFERENCE = "sim_canary_reference.json"
PERTURBABLE = ("timestep", "control_freq")


class CanarySet(BaseModel):
    """Which episodes the canary plays (fixed: a reference is only comparable with its own set)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    suite: str = "libero_spatial"
    tasks: tuple[int, ...] = (0, 2)
    states: tuple[int, ...] = (0, 1)
    max_steps: int = 100
    fingerprint_steps: tuple[int, ...] = (25, 50, 75)
    decimals: int = DECIMALS
    seed: int = 0


CANARY = CanarySet()


class EpisodePrint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: int
    init_state: int
    success: bool
    steps: int
    state_sha256: dict[str, str] = Field(description="fingerprint step -> sha256 of the rounded qpos+qvel")

    @property
    def key(self) -> str:
        return f"{self.task_id}/{self.init_state}"


class Fingerprint(BaseModel):
    """One play of the canary set: what was played, on which versions, and each episode's fingerprint."""

    model_config = ConfigDict(extra="forbid")

    canary: CanarySet
    versions: dict[str, str]
    episodes: list[EpisodePrint]
    perturbed: dict[str, float] = Field(default_factory=dict)
    wall_s: float = 0.0


class CanaryVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ok: bool
    moved: list[str] = Field(default_factory=list, description="One line per episode that differs")
    versions_here: dict[str, str]
    versions_reference: dict[str, str]
    summary: str


class CanaryRun(BaseModel):
    """What ``python -m eval_runner.sim_canary --json`` prints: the verdict and the fingerprint it judged."""

    model_config = ConfigDict(extra="forbid")

    verdict: CanaryVerdict
    fingerprint: Fingerprint


class CanaryNotRunError(SimulatorError):
    """The canary gave no verdict: it crashed, or printed none."""


class CanaryTimeoutError(CanaryNotRunError):
    """The canary did not finish within its time-out."""


class CanaryUnavailableError(CanaryNotRunError):
    """The simulator is not installed where the canary was started (e.g. the probe image)."""


def state_digest(sim: Any, decimals: int) -> str:
    """sha256 of the simulator's qpos and qvel rounded to ``decimals`` (``-0.0`` folded into ``0.0``)."""
    import numpy as np  # here, so run_in_child's callers need no numpy

    values = np.round(np.concatenate([sim.data.qpos, sim.data.qvel]).astype(np.float64), decimals) + 0.0
    return hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()


def perturb(env: Any, changes: dict[str, float]) -> None:
    """Apply the test-only physics changes to a freshly reset env (LIBERO's reset rebuilds the sim)."""
    inner = env.raw_env.env
    if "timestep" in changes:
        env.sim.model.opt.timestep = changes["timestep"]
    if "control_freq" in changes:
        inner.control_freq = changes["control_freq"]
        inner.control_timestep = 1.0 / changes["control_freq"]


def play_episode(env: Any, task_id: int, state: int, canary: CanarySet, changes: dict[str, float]) -> EpisodePrint:
    """One episode of the expert at noise 0; the state digest at each fingerprint step."""
    from eval_runner.policies.expert import ExpertPolicy
    from eval_runner.rollout import stack_observations

    policy = ExpertPolicy(noise=0.0, seed=canary.seed)
    obs = env.start_episode(state, canary.seed, _settle_steps(canary.suite))
    perturb(env, changes)
    episode_id = f"t{task_id}-s{state}-a0"
    digests: dict[str, str] = {}
    success, steps = False, 0
    while steps < canary.max_steps and not success:
        action = policy.act(stack_observations([obs], [""], [episode_id]))[0]
        obs, success = env.step(action, render=False)
        steps += 1
        if steps in canary.fingerprint_steps:
            digests[str(steps)] = state_digest(env.sim, canary.decimals)
    return EpisodePrint(task_id=task_id, init_state=state, success=success, steps=steps, state_sha256=digests)


def _settle_steps(suite: str) -> int:
    from rlinf_bench.suites import get_suite

    return get_suite(suite).settle_steps


def play(
    canary: CanarySet = CANARY, changes: dict[str, float] | None = None, *, cache_dir: Path | None = None
) -> Fingerprint:
    """Play the whole set in this process (one env per task) and return its fingerprint."""
    from eval_runner.env import LiberoEnv
    from eval_runner.libero_setup import configure_libero
    from eval_runner.policies.expert import ExpertPolicy, check_task
    from rlinf_bench.provenance import package_versions
    from rlinf_bench.suites import get_suite

    configure_libero(cache_dir, needs_renderer=False)
    suite = get_suite(canary.suite)
    t0 = time.perf_counter()
    episodes = []
    for task_id in canary.tasks:
        task = suite.task(task_id)
        check_task(task)
        env = LiberoEnv(task, ExpertPolicy.obs_spec, horizon=canary.max_steps)
        try:
            episodes += [play_episode(env, task_id, s, canary, changes or {}) for s in canary.states]
        finally:
            env.close()
    return Fingerprint(
        canary=canary,
        versions=package_versions(VERSIONED),
        episodes=episodes,
        perturbed=changes or {},
        wall_s=round(time.perf_counter() - t0, 1),
    )


def compare(here: Fingerprint, reference: Fingerprint) -> CanaryVerdict:
    """Which episodes moved; every difference is named with the first fingerprint step that differs."""
    ref = {e.key: e for e in reference.episodes}
    moved: list[str] = []
    if here.canary != reference.canary:
        moved.append(f"the canary set differs from the reference's ({reference.canary.model_dump()}): regenerate it")
    for ep in here.episodes:
        before = ref.get(ep.key)
        if before is None:
            moved.append(f"task {ep.task_id} state {ep.init_state}: not in the reference")
            continue
        what = []
        if (ep.success, ep.steps) != (before.success, before.steps):
            what.append(f"success/steps {_outcome(ep)} (reference {_outcome(before)})")
        steps = [s for s in sorted(before.state_sha256, key=int) if ep.state_sha256.get(s) != before.state_sha256[s]]
        if steps:
            what.append(f"state differs from step {steps[0]} on")
        if what:
            moved.append(f"task {ep.task_id} state {ep.init_state}: {'; '.join(what)}")
    versions_differ = {
        k for k in set(here.versions) | set(reference.versions) if here.versions.get(k) != reference.versions.get(k)
    }
    if moved:
        changed = ", ".join(
            f"{k} {reference.versions.get(k, '?')} -> {here.versions.get(k, '?')}" for k in sorted(versions_differ)
        )
        summary = (
            f"{len(moved)} of {len(here.episodes)} canary episodes moved: the physics differs from the reference's; "
            + (f"versions changed: {changed}" if changed else "same versions (another CPU, BLAS or a physics setting)")
        )
    else:
        summary = f"all {len(here.episodes)} canary episodes match the reference (states rounded to {here.canary.decimals} decimals)"
    return CanaryVerdict(
        ok=not moved, moved=moved, versions_here=here.versions, versions_reference=reference.versions, summary=summary
    )


def _outcome(ep: EpisodePrint) -> str:
    return f"{'success' if ep.success else 'failure'} at {ep.steps}"


def load_reference(path: Path | None = None) -> Fingerprint:
    """The reference shipped in the package, or ``path``."""
    if path is not None:
        return Fingerprint.model_validate_json(path.read_text())
    text = resources.files("rlinf_bench.data").joinpath(REFERENCE).read_text()
    return Fingerprint.model_validate_json(text)


def parse_perturb(values: Sequence[str]) -> dict[str, float]:
    """``["timestep=0.0025"]`` -> ``{"timestep": 0.0025}``; names outside :data:`PERTURBABLE` are refused."""
    out: dict[str, float] = {}
    for value in values:
        name, _, number = value.partition("=")
        if name not in PERTURBABLE or not number:
            raise SystemExit(f"--perturb {value!r}: use NAME=VALUE with NAME one of {', '.join(PERTURBABLE)}")
        out[name] = float(number)
    return out


def run_in_child(timeout_s: float, *, env: Mapping[str, str] | None = None) -> CanaryRun:
    """Play the canary in a child interpreter (this module's ``--json`` command) and read its verdict back.

    Renders headless (EGL) unless ``env`` or the environment says otherwise. Raises
    :class:`CanaryTimeoutError` past ``timeout_s``, :class:`CanaryUnavailableError` where the simulator is
    missing, :class:`CanaryNotRunError` for any other exit without a readable verdict (with its last lines).
    """
    environ = {**os.environ, **(env or {})}
    environ.setdefault("MUJOCO_GL", "egl")
    environ.setdefault("PYOPENGL_PLATFORM", "egl")
    cmd = [sys.executable, "-m", "eval_runner.sim_canary", "--json"]
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval_runner.sim_canary", description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print the verdict and the fingerprint as one JSON line")
    parser.add_argument(
        "--reference", type=Path, default=None, help="compare with this file (default: the shipped one)"
    )
    parser.add_argument(
        "--perturb", action="append", default=[], metavar="NAME=VALUE", help="test only: " + ", ".join(PERTURBABLE)
    )
    args = parser.parse_args(argv)
    changes = parse_perturb(args.perturb)
    here = play(CANARY, changes)
    verdict = compare(here, load_reference(args.reference))
    if args.json:
        print(CanaryRun(verdict=verdict, fingerprint=here).model_dump_json())
    else:
        print(verdict.summary)
        for line in verdict.moved:
            print(f"  moved: {line}")
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main())
