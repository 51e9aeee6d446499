"""How much of a GPU policy's time ``serve-policy``'s server loses between calls when requests are always queued.

Issue 25's whole-suite runs had the model thread busy 0.88-0.94 of the time from the first call to the stop.
This bench asks whether the server itself (decoding frames, merging requests, handing the GIL between its
connection threads and the model thread) leaves the model idle when there is always work. It serves a
policy that behaves like a GPU forward, ``ms_per_row`` of waiting per row with the GIL released (as a
CUDA synchronize does), on one pinned core, as ``serve-policy --cpus 0`` does. A client process on the other
cores keeps ``inflight`` requests of 1-2 rows with two 256 px images each on their way, from ``threads``
threads, so the queue never empties.

It reports the model's busy share and the mean time between two calls. A busy share near 1 means the
server's own work does not explain the suites' idle time, which then lies in the workers (start-up, resets,
the last wave); serve-policy's ``model_busy_by_tenth`` tells those apart in a real run.

Run: ``.venv/bin/python bench/server_saturation.py [--seconds 15] [--rounds 2]``; writes
``bench/results/server_saturation_cpu.json`` (with ``--update-results``; else ``$OUT`` or a temporary file).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_gpu_common import results_path  # noqa: E402
from bench.policy_server_latency import CAMERAS, make_obs  # noqa: E402
from eval_runner.api import ObservationSpec, Policy  # noqa: E402

RESOLUTION = 256
CHUNK = 8


class GpuLike(Policy):
    """Waits ``ms_per_row`` per row with the GIL free, as a GPU forward ending in a synchronize does."""

    obs_spec = ObservationSpec(cameras=CAMERAS, resolution=RESOLUTION)

    def __init__(self, ms_per_row: float) -> None:
        self.ms_per_row = ms_per_row

    def act(self, obs: dict[str, Any]) -> np.ndarray:
        rows = len(obs["episode_id"])
        np.stack([obs[f"{c}_image"] for c in CAMERAS], axis=1)  # the host-side stack a real policy does
        time.sleep(self.ms_per_row / 1000.0 * rows)
        return np.zeros((rows, CHUNK, 7), np.float32)


def observation(rows: int, seed: int) -> dict[str, Any]:
    """A request as the runner sends it (two 256 px images and the proprio per row), its own episodes."""
    obs = make_obs(rows, CAMERAS, RESOLUTION, np.random.default_rng(seed))
    obs["episode_id"] = [f"libero_spatial/0/{seed}_{i}" for i in range(rows)]
    return obs


def _clients(url: str, seconds: float, threads: int, inflight: int, cpus: list[int]) -> None:
    from eval_runner.api import load_policy

    if cpus:
        os.sched_setaffinity(0, cpus)
    client = load_policy(f"server:{url}?inflight={inflight}", None)
    stop = time.monotonic() + seconds

    def send(k: int) -> None:
        obs = observation(1 + k % 2, k)
        while time.monotonic() < stop:
            client.act(obs)

    pool = [threading.Thread(target=send, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    client.close()


def saturate(ms_per_row: float, seconds: float, threads: int, inflight: int) -> dict[str, Any]:
    """One run: the server pinned to the first core, the client process on the others."""
    from eval_runner.api import PolicyServer, ServerBatching, pin_process

    cpus = sorted(os.sched_getaffinity(0))
    server_cpus, client_cpus = cpus[:1], cpus[1:]
    with PolicyServer(GpuLike(ms_per_row), port=0, batching=ServerBatching(max_batch=16)) as server:
        pin_process(server_cpus)  # every server thread, as serve-policy --cpus does
        client = mp.get_context("spawn").Process(
            target=_clients, args=(server.url, seconds, threads, inflight, client_cpus)
        )
        client.start()
        client.join(timeout=seconds + 120)
        summary = server.call_summary()
    pin_process(cpus)  # every thread back on every core
    calls, span, busy = summary["policy_calls"], summary["first_call_to_stop_s"], summary["model_busy_s"]
    return {
        "ms_per_row": ms_per_row,
        "policy_calls": calls,
        "mean_rows_per_call": summary["mean_rows_per_call"],
        "model_busy": summary["model_busy"],
        "gap_ms_per_call": round(1000 * (span - busy) / calls, 2) if calls else None,
        "measured_ms_per_row": summary["ms_per_row"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each run")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each setting, in turns")
    parser.add_argument(
        "--ms-per-row", default="12.3,16.3", help="the forward's time per row, alone and beside renders"
    )
    parser.add_argument("--threads", type=int, default=12, help="client threads sending requests")
    parser.add_argument("--inflight", type=int, default=8, help="the client's ?inflight=K")
    parser.add_argument("--out", type=Path, help="result file (default: $OUT or a temporary file)")
    parser.add_argument("--update-results", action="store_true", help="allow an --out inside bench/results/")
    args = parser.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("server_saturation needs two cores: one for the server, the rest for the client")
    out = results_path(args.out, update_results=args.update_results, name="server_saturation.json")
    settings = [float(x) for x in args.ms_per_row.split(",") if x]
    runs: dict[str, list[dict[str, Any]]] = {str(ms): [] for ms in settings}
    for _ in range(args.rounds):
        for ms in settings:
            row = saturate(ms, args.seconds, args.threads, args.inflight)
            runs[str(ms)].append(row)
            print(json.dumps(row), flush=True)
    doc = {
        "benchmark": "server_saturation",
        "machine": {"cores": len(os.sched_getaffinity(0)), "cpu": platform.processor() or platform.machine()},
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "settings": {"seconds": args.seconds, "threads": args.threads, "inflight": args.inflight},
        "runs": runs,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
