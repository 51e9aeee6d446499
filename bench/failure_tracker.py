"""What the failure tracker adds to a LIBERO step: the time of ``observe`` beside the time of the step itself.

The worker calls :class:`LiberoFailureTracker`'s ``observe`` after every policy step of every episode, so its
cost is paid on every step of an evaluation. This bench runs episodes in this process (one core, as a worker)
on a few tasks of each kind of goal:

- one On/In predicate (LIBERO-Spatial, LIBERO-Object), driven by ``builtin:expert`` with noise, so the gripper
  reaches, grasps, carries and lets go, and the tracker's "around a hold" path runs;
- several predicates or articulated ones (LIBERO-Goal, LIBERO-10), driven by a random arm motion with the
  gripper opening and closing, where the tracker evaluates each predicate as LIBERO does, every step.

Per task it records the step's median and mean time (``LiberoEnv.step``, without cameras: the physics alone, so
the tracker's share reported is the most it can be; a rendered step costs more), ``observe``'s median, mean and
99th percentile, the share of the stepping time ``observe`` took in all, the time of ``cause`` at an episode's
end, and the reason each episode got.

``.venv/bin/python bench/failure_tracker.py [--tasks libero_spatial:0,...] [--episodes 2] [--steps 220]
[--expert SPEC] [--out FILE]``; ``--update-results`` writes ``bench/results/failure_tracker.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_gpu_common import command_line, machine  # noqa: E402
from eval_runner.api import limit_threads  # noqa: E402

TRACKED = ROOT / "bench" / "results" / "failure_tracker.json"
DEFAULT_TASKS = "libero_spatial:0,libero_spatial:5,libero_object:0,libero_goal:0,libero_goal:8,libero_10:0"
DEFAULT_EXPERT = "builtin:expert?noise=1.0"
#: The protocol's settle steps before the policy acts (OpenVLA-OFT's 10).
SETTLE = 10


class RandomMotion:
    """A policy for goals the expert cannot do: a random arm motion, the gripper closing and opening in turns."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.step = 0

    def act(self, _obs: dict[str, Any]) -> np.ndarray:
        action = np.clip(self.rng.normal(0.0, 0.5, 7), -1.0, 1.0)
        action[3:6] = 0.0
        action[6] = 1.0 if (self.step // 30) % 2 else -1.0
        self.step += 1
        return action


def run_task(suite: str, task_id: int, episodes: int, steps: int, expert_spec: str) -> dict[str, Any]:
    """Episodes of one task with the tracker following each; the step's and the tracker's times."""
    from eval_runner.api import LiberoEnv, LiberoFailureTracker, ObservationSpec, load_policy
    from rlinf_bench.errors import PolicyError
    from rlinf_bench.suites import get_suite

    task = get_suite(suite).task(task_id)
    expert = load_policy(expert_spec, None)
    try:
        expert.check_tasks([task])
        driver = "builtin:expert"
    except PolicyError:
        driver = "random motion"
    spec = expert.obs_spec if driver == "builtin:expert" else ObservationSpec(cameras=())
    env = LiberoEnv(task, spec, horizon=steps)
    tracker = LiberoFailureTracker()
    step_s: list[float] = []
    observe_s: list[float] = []
    cause_s: list[float] = []
    outcomes: list[str] = []
    goal = [list(p) for p in env.raw_env.env.parsed_problem["goal_state"]]
    try:
        for episode in range(episodes):
            obs = env.start_episode(episode, seed=0, settle_steps=SETTLE)
            t0 = time.perf_counter()
            tracker.start(env.raw_env.env)
            start_s = time.perf_counter() - t0
            episode_id = f"{suite}-{task_id}-{episode}"
            expert.reset([episode_id])
            motion = RandomMotion(seed=episode)
            success = False
            for _ in range(steps):
                if driver == "builtin:expert":
                    batch = {k: np.asarray(v)[None] for k, v in obs.items()}
                    batch["episode_id"], batch["task_description"] = [episode_id], [task.language]
                    action = expert.act(batch)[0]
                else:
                    action = motion.act(obs)
                t0 = time.perf_counter()
                obs, success = env.step(action, render=False)
                t1 = time.perf_counter()
                tracker.observe(success)
                step_s.append(t1 - t0)
                observe_s.append(time.perf_counter() - t1)
                if success:
                    break
            if success:
                outcomes.append("success")
            else:
                t0 = time.perf_counter()
                cause = tracker.cause()
                cause_s.append(time.perf_counter() - t0)
                outcomes.append(f"{cause.reason.value}: {cause.detail}")
    finally:
        env.close()
    step_ms = float(np.median(step_s)) * 1000
    observe_us = float(np.median(observe_s)) * 1e6
    return {
        "suite": suite,
        "task": task_id,
        "goal": goal,
        "driver": driver,
        "steps_timed": len(step_s),
        "step_ms_median": round(step_ms, 3),
        "observe_us_median": round(observe_us, 1),
        "observe_us_p99": round(float(np.percentile(observe_s, 99)) * 1e6, 1),
        "step_ms_mean": round(float(np.mean(step_s)) * 1000, 3),
        "observe_us_mean": round(float(np.mean(observe_s)) * 1e6, 1),
        # the share of the episodes' stepping time the tracker took (totals, so its rare slow steps count)
        "observe_over_step": round(float(np.sum(observe_s) / np.sum(step_s)), 4),
        "start_ms_last_episode": round(start_s * 1000, 2),
        "cause_ms_max": round(max(cause_s) * 1000, 2) if cause_s else None,
        "outcomes": outcomes,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default=DEFAULT_TASKS, help="comma-separated SUITE:TASK")
    parser.add_argument("--episodes", type=int, default=2, help="episodes per task (initial states 0, 1, ...)")
    parser.add_argument("--steps", type=int, default=220, help="step limit of an episode")
    parser.add_argument("--expert", default=DEFAULT_EXPERT, help="the expert's spec, for On/In goals")
    parser.add_argument("--out", type=Path, help="result file (default: print only)")
    parser.add_argument("--update-results", action="store_true", help=f"write {TRACKED.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    out = TRACKED if args.update_results else args.out
    if out is not None and out.resolve() == TRACKED.resolve() and not args.update_results:
        parser.error(f"--out {out} is the published figure: add --update-results to replace it")
    pairs = []
    for item in args.tasks.split(","):
        suite, _, task = item.strip().partition(":")
        if not suite.startswith("libero_") or not (task.isascii() and task.isdigit()):
            parser.error(f"--tasks: {item!r} is not SUITE:TASK of a LIBERO suite (e.g. libero_spatial:0)")
        pairs.append((suite, int(task)))
    limit_threads(1)  # as a worker: one core each
    from eval_runner.api import configure_libero

    configure_libero(None, needs_renderer=False)
    load_before = os.getloadavg()[0]
    rows = []
    for suite, task in pairs:
        row = run_task(suite, task, args.episodes, args.steps, args.expert)
        rows.append(row)
        print(
            f"{suite}:{task} ({row['driver']}): step {row['step_ms_median']} ms, observe {row['observe_us_median']} µs "
            f"(p99 {row['observe_us_p99']} µs, {row['observe_over_step']:.2%} of a step); {row['outcomes']}",
            flush=True,
        )
    doc = {
        "benchmark": "failure_tracker",
        "command": command_line("bench/failure_tracker.py", argv),
        "machine": machine(),
        "load_average_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "cameras": "none (physics only: the tracker's share of a rendered step is smaller)",
        "settings": {"episodes": args.episodes, "steps": args.steps, "expert": args.expert, "settle_steps": SETTLE},
        "worst_observe_over_step": max(row["observe_over_step"] for row in rows),
        "tasks": rows,
    }
    if out is not None:
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
