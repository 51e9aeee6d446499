"""A stand-in for the LIBERO worker process: the same pipe protocol, a tiny deterministic simulator.

Each episode's state starts from its seed and moves with the actions, so an episode's trajectory
depends only on its own actions; the options make one episode straggle or fail to render, so the
rollout's scheduling can be tested without a simulator and without timing assumptions.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

from eval_runner.scheduler import EpisodeTask
from eval_runner.vector import WorkerConfig


@dataclass(frozen=True)
class FakeOptions:
    """What the fake simulator does besides stepping."""

    straggler: int | None = None  # init_state whose first step blocks until ``release`` exists
    release: Path | None = None
    render_fail: int | None = None  # init_state whose start fails with an EGL error
    render_fail_once: Path | None = None  # marker: fail only while it does not exist
    # A folder each worker marks when it starts its first episode; that episode's first step blocks
    # until ``all_started`` workers have marked it, so every worker holds an episode at once.
    started_dir: Path | None = None
    all_started: int = 0
    refuse_layout: bool = False  # a layout perturbation finds no valid draw (its start says why)


def fake_worker(options: FakeOptions, conn: Connection, config: WorkerConfig) -> None:
    """Serve start/step/close like ``eval_runner.vector.worker_main`` does."""
    episode: EpisodeTask | None = None
    x = np.zeros(2, dtype=np.float32)
    steps = 0
    first_episode = True
    try:
        while True:
            msg = conn.recv()
            if msg[0] == "close":
                return
            if msg[0] == "load":  # a scene build: nothing to build here
                conn.send(("loaded", None, {"setup_s": 0.0}))
            elif msg[0] == "video":  # the episode that just ended, as a short MP4 of blank frames
                from eval_runner.video import write_video

                conn.send(("ok", str(write_video(Path(msg[1]), [np.zeros((32, 32, 3), np.uint8)] * 2))))
            elif msg[0] == "start":
                episode, steps = msg[1], 0
                if options.render_fail == episode.init_state and not (
                    options.render_fail_once is not None and options.render_fail_once.exists()
                ):
                    if options.render_fail_once is not None:
                        options.render_fail_once.write_text("failed once\n")
                    conn.send(("error", "RenderingError", "rendering (EGL) failed on EGL device 7: eglInitialize"))
                    continue
                if options.started_dir is not None and first_episode:
                    (options.started_dir / str(os.getpid())).touch()
                x = np.random.default_rng([episode.seed, episode.init_state]).normal(size=2).astype(np.float32)
                conn.send(
                    (
                        "obs",
                        {"x": x.copy()},
                        {"done": False, "setup_s": 0.0, "sim_s": 0.0, **_perturbed(episode, options)},
                    )
                )
            elif msg[0] == "step":
                assert episode is not None
                if options.straggler == episode.init_state and steps == 0 and options.release is not None:
                    while not options.release.exists():
                        time.sleep(0.01)
                if options.started_dir is not None and first_episode and steps == 0:
                    while len(list(options.started_dir.iterdir())) < options.all_started:
                        time.sleep(0.01)
                    first_episode = False
                chunk = np.asarray(msg[1], dtype=np.float64).reshape(-1, 7)  # one action, or a chunk
                done, taken = False, 0
                for action in chunk:
                    x = (0.9 * x + action[:2].astype(np.float32)).astype(np.float32)
                    steps += 1
                    taken += 1
                    done = bool(x[0] > 2.0)
                    if done:
                        break
                conn.send(("obs", {"x": x.copy()}, {"done": done, "steps": taken, "sim_s": 0.001 * taken}))
    except EOFError:
        return
    finally:
        conn.close()


def _perturbed(episode: EpisodeTask, options: FakeOptions) -> dict[str, object]:
    """A perturbed episode's start info, as a scene reports it: its record, and why it is refused if it is."""
    from rlinf_bench.contracts import PerturbationAxis
    from rlinf_bench.robustness import perturbation_record

    axis = episode.perturbation
    if axis is None:
        return {}
    info: dict[str, object] = {"perturbation": perturbation_record(axis.axis, axis.level, {"drawn": 1.0})}
    if options.refuse_layout and axis.axis == PerturbationAxis.LAYOUT:
        info["refused"] = "no physically valid layout in 8 draws"
    return info
