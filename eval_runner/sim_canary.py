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

Elsewhere (the ``sim_canary`` probe, the doctor's ``canary.sim`` check) it is played by the one canary runner,
``rlinf_doctor.canary_runner.run_in_child``: this command in a child interpreter, its ``--json`` line read back
as a :class:`~rlinf_bench.doctor.canary.CanaryRun`.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from rlinf_bench.doctor.canary import CanaryRun, CanarySet, CanaryVerdict, EpisodePrint, Fingerprint
from rlinf_bench.provenance import package_versions

__all__ = [
    "CANARY",
    "CanaryRun",
    "CanarySet",
    "CanaryVerdict",
    "EpisodePrint",
    "Fingerprint",
    "compare",
    "load_reference",
    "main",
    "parse_perturb",
    "play",
]

#: The versions the fingerprint depends on (recorded on both sides of a comparison).
VERSIONED = ("mujoco", "robosuite", "rlinf-libero", "numpy")
DECIMALS = 3
REFERENCE = "sim_canary_reference.json"
PERTURBABLE = ("timestep", "control_freq")


#: The canary set: 2 tasks x 2 initial states of LIBERO-Spatial, 100 steps, fingerprinted at 25, 50 and 75.
CANARY = CanarySet(
    suite="libero_spatial",
    tasks=(0, 2),
    states=(0, 1),
    max_steps=100,
    fingerprint_steps=(25, 50, 75),
    decimals=DECIMALS,
    seed=0,
)


def state_digest(sim: Any, decimals: int) -> str:
    """sha256 of the simulator's qpos and qvel rounded to ``decimals`` (``-0.0`` folded into ``0.0``)."""
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
