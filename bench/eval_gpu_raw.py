"""``bench/eval_gpu.py``'s raw parts: N processes stepping LIBERO with no harness, and a one-env render check."""

from __future__ import annotations

import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_gpu_common import CAMERAS, MAX_STEPS, SETTLE, SUITE, TASK, ZERO_ACTION  # noqa: E402


def _raw_process(
    index: int,
    threads: int,
    seconds: float,
    resolution: int,
    cache: str,
    barrier: Any,
    out: Any,
    episodes: bool,
    max_steps: int,
    task: int = TASK,
    physics_once: bool = True,
    suite: str = SUITE,
) -> None:
    from eval_runner.api import limit_threads

    limit_threads(threads)
    from eval_runner.api import LiberoEnv, ObservationSpec, RngStart, configure_libero, seeded_state
    from rlinf_bench.suites import get_suite

    configure_libero(Path(cache))
    import torch

    torch.set_num_threads(threads)
    spec = ObservationSpec(cameras=CAMERAS, resolution=resolution, proprio=())
    env = LiberoEnv(get_suite(suite).task(task), spec, horizon=100_000)
    env.physics_once = physics_once
    state = index % 50
    seed = 0  # the run seed: the runner seeds every episode's env with it (eval_runner.scheduler.plan_episodes)

    def start(init_state: int) -> None:
        # One hard reset per episode, as the reference loop (seed once, reset per episode): each reset
        # continues this process's own RNG chain instead of replaying the reference's from the seed.
        chain = env.rng_after_reset or seeded_state(seed)
        env.start_episode(init_state, seed, SETTLE, RngStart(seed=seed, base_index=init_state, state=chain))

    start(state)
    for _ in range(10):  # warm-up: the first renders allocate buffers
        env.step(ZERO_ACTION)
    barrier.wait()
    t0 = time.perf_counter()
    steps = 0
    while time.perf_counter() - t0 < seconds:
        if episodes and steps % max_steps == 0:  # the reference loop: a new initial state every max_steps
            state = (state + 1) % 50
            start(state)
        env.step(ZERO_ACTION)
        steps += 1
    elapsed = time.perf_counter() - t0
    out.put((index, steps, elapsed, env.extra_resets))
    env.close()


def raw_aggregate(
    n: int,
    seconds: float,
    threads: int,
    resolution: int,
    cache: Path,
    episodes: bool = False,
    max_steps: int = MAX_STEPS,
    tasks: tuple[int, ...] = (TASK,),
    physics_once: bool = True,
    suite: str = SUITE,
) -> dict[str, Any]:
    """N processes stepping LIBERO with no harness; aggregate steps/s over a common window.

    Process ``i`` steps task ``tasks[i % len(tasks)]`` of ``suite`` (the harness over several tasks spreads its workers alike).

    ``episodes``: each process runs whole episodes as the reference loop does (hard reset to the next
    initial state, settle, ``max_steps`` steps), so resets are in the figure; otherwise it only steps.
    ``physics_once``: each sub-step's forward pass computed once, as the harness does (False: robosuite's
    own loop, three passes per sub-step; the same numbers either way, ``eval_runner.physics``).

    Never hangs: a process that dies (or a barrier that never fills) ends the measurement with an error.
    """
    import queue

    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(n, timeout=300), ctx.Queue()
    procs = [
        ctx.Process(
            target=_raw_process,
            args=(
                i,
                threads,
                seconds,
                resolution,
                str(cache),
                barrier,
                out,
                episodes,
                max_steps,
                tasks[i % len(tasks)],
                physics_once,
                suite,  # an argument: a spawned process imports this module afresh
            ),
            daemon=True,
        )
        for i in range(n)
    ]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    rows: list[tuple[int, int, float, int]] = []
    deadline = time.monotonic() + 300 + seconds
    while len(rows) < n:
        try:
            rows.append(out.get(timeout=2))
            continue
        except queue.Empty:
            pass
        dead = [(i, p.exitcode) for i, p in enumerate(procs) if p.exitcode not in (None, 0)]
        if dead or time.monotonic() > deadline:
            for p in procs:
                p.kill()
            why = f"processes died (index, exit code): {dead}" if dead else "timed out"
            return {"processes": n, "error": f"raw measurement failed: {why}; see the log above"}
    for p in procs:
        p.join(timeout=30)
    per = [steps / elapsed for _, steps, elapsed, _ in rows]
    return {
        "processes": n,
        "suite": suite,
        "tasks": list(tasks),
        "mode": "episodes (reset + settle + steps)" if episodes else "stepping only",
        "physics": "each sub-step's forward pass once" if physics_once else "robosuite's loop (three passes)",
        "threads_per_process": threads,
        "seconds": seconds,
        "steps_per_s": round(sum(per), 1),
        "per_process_steps_per_s": [round(x, 1) for x in sorted(per)],
        "extra_resets": sum(extra for *_, extra in rows),  # RNG-replay resets: 0, one reset per episode
        "total_s_with_start": round(time.perf_counter() - t0, 1),
    }


def render_check(resolution: int, cache: Path, steps: int = 30, suite: str = SUITE) -> dict[str, Any]:
    """One LiberoEnv with both cameras in this process: does EGL render here, and how fast."""
    from eval_runner.api import LiberoEnv, ObservationSpec, configure_libero
    from rlinf_bench.suites import get_suite

    paths = configure_libero(cache)
    t0 = time.perf_counter()
    env = LiberoEnv(get_suite(suite).task(TASK), ObservationSpec(cameras=CAMERAS, resolution=resolution), horizon=999)
    build_s = time.perf_counter() - t0
    obs = env.start_episode(0, 0, SETTLE)
    t1 = time.perf_counter()
    for _ in range(steps):
        obs, _ = env.step(ZERO_ACTION)
    step_ms = 1000 * (time.perf_counter() - t1) / steps
    # A hard reset with a new render context (robosuite's way) against one that keeps it (the runner's):
    # the time of each, and whether every image and the state are the same on this GPU's driver.
    starts: dict[str, Any] = {}
    for mode, reuse in (("new_context", False), ("kept_context", True)):
        env.reuse_render_context = reuse
        times, seen = [], []
        for state in (1, 1, 1):
            t = time.perf_counter()
            first = env.start_episode(state, 0, SETTLE)
            times.append(time.perf_counter() - t)
            after, _ = env.step(np.array([0.5, 0.0, -0.3, 0.0, 0.0, 0.0, 1.0]))
            seen.append((first, after, env.sim.get_state().flatten().copy()))
        starts[mode] = {"start_s": [round(x, 3) for x in times], "seen": seen}
    same = all(
        np.array_equal(a[2], b[2]) and all(np.array_equal(a[i][k], b[i][k]) for i in (0, 1) for k in a[i])
        for a, b in zip(starts["new_context"]["seen"], starts["kept_context"]["seen"], strict=True)
    )
    env.close()
    return {
        "rendering": paths.rendering,
        "build_s": round(build_s, 1),
        "step_ms": round(step_ms, 1),
        "image_mean": round(float(obs["agentview_image"].mean()), 1),
        "start_s_new_context": starts["new_context"]["start_s"],
        "start_s_kept_context": starts["kept_context"]["start_s"],
        "kept_context_bit_identical": same,
    }
