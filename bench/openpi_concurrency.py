"""What several websocket connections buy the ``openpi:`` client against one openpi server.

openpi's ``WebsocketPolicyServer`` (PyPI ``openpi-server``) answers one observation per request and
runs ``policy.infer`` inside its asyncio loop, so inference itself is never concurrent on one server.
What more connections can overlap is the rest: the client's preprocessing (flip, ``resize_with_pad``
of two 256 px frames), msgpack encoding and the transfer of one request with the inference of
another. This starts the real server on loopback around a policy that sleeps ``--infer-ms`` (a GPU
forward pass) and times one ``act`` of a batch of 8 episodes that all need a new chunk (8 requests),
over 1, 2, 4 and 8 connections.

Run: ``PYTHONPATH=. .venv/bin/python bench/openpi_concurrency.py [--repeats 20] [--infer-ms 0 20]``; writes
``bench/results/openpi_concurrency.json``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as bench/openpi_concurrency.py from anywhere

from eval_runner.api import load_policy
from tests.openpi_server import free_port
from tests.policy_fixtures import make_obs

BATCH = 8
CAMERAS = ("agentview", "robot0_eye_in_hand")


class _SleepyPolicy:
    def __init__(self, infer_ms: float) -> None:
        self.infer_s = infer_ms / 1000

    def infer(self, obs: dict[str, Any]) -> dict[str, Any]:
        time.sleep(self.infer_s)
        return {"actions": np.zeros((10, 7))}

    def reset(self) -> None:
        pass


def _serve(port: int, infer_ms: float) -> None:  # pragma: no cover - runs in a child process
    from openpi_server import WebsocketPolicyServer

    WebsocketPolicyServer(_SleepyPolicy(infer_ms), host="127.0.0.1", port=port).serve_forever()  # type: ignore[arg-type]


def _time_acts(url: str, connections: int, repeats: int) -> list[float]:
    # the openpi: policy a user names, with its client options in the spec
    policy = load_policy(f"openpi:{url}?connections={connections}&retries=40&backoff_s=0.05&max_backoff_s=0.2", None)
    obs = make_obs(BATCH, cameras=CAMERAS, resolution=256)
    times = []
    try:
        for k in range(repeats + 2):
            obs["episode_id"] = [f"r{k}-e{i}" for i in range(BATCH)]  # new episodes: every row needs a chunk
            t0 = time.perf_counter()
            policy.act(obs)
            if k >= 2:  # the first calls open the extra connections
                times.append((time.perf_counter() - t0) * 1000)
    finally:
        policy.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--infer-ms", type=float, nargs="+", default=[0.0, 20.0])
    parser.add_argument("--out", type=Path, default=Path("bench/results/openpi_concurrency.json"))
    args = parser.parse_args()
    rows = []
    for infer_ms in args.infer_ms:
        port = free_port()
        server = mp.get_context("spawn").Process(target=_serve, args=(port, infer_ms), daemon=True)
        server.start()
        try:
            for connections in (1, 2, 4, 8):
                times = _time_acts(f"ws://127.0.0.1:{port}", connections, args.repeats)
                row = {
                    "infer_ms": infer_ms,
                    "connections": connections,
                    "requests_per_act": BATCH,
                    "act_ms_median": round(statistics.median(times), 2),
                    "act_ms_p90": round(sorted(times)[int(0.9 * (len(times) - 1))], 2),
                }
                rows.append(row)
                print(json.dumps(row))
        finally:
            server.kill()
            server.join()
    for row in rows:
        base = next(r for r in rows if r["infer_ms"] == row["infer_ms"] and r["connections"] == 1)
        row["speedup_vs_1"] = round(base["act_ms_median"] / row["act_ms_median"], 2)
    result = {
        "benchmark": "openpi_concurrency",
        "host": platform.node(),
        "cpu": platform.processor() or platform.machine(),
        "batch": BATCH,
        "image_px": 256,
        "repeats": args.repeats,
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
