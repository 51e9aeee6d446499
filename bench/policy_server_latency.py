"""What serving a policy over the websocket protocol costs per vector step, on loopback.

For batch sizes 1/4/16, with and without camera images, it times the in-process ``act`` of the
checkpoint-reading demo policy and the same call through ``serve-policy``'s server and the
``server:`` client. The difference is the protocol overhead per vector step (msgpack encoding,
copies, two websocket frames), compared with LIBERO's own CPU step times from REFERENCE.md (physics
35 ms, one camera 200 ms, two cameras 376 ms at 128 px). Goal: overhead < 5 % of the simulator step.

Run: ``.venv/bin/python bench/policy_server_latency.py [--repeats 200]``; writes
``bench/results/policy_server_latency.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from eval_runner.api import Policy, PolicyServer, load_policy, write_demo_checkpoint

# CPU LIBERO step times measured on this team's 2-core boxes (REFERENCE.md section 1), in ms.
SIM_STEP_MS = {0: 35.0, 1: 200.0, 2: 376.0}
CAMERAS = ("agentview", "robot0_eye_in_hand")


def make_obs(batch: int, cameras: tuple[str, ...], resolution: int, rng: np.random.Generator) -> dict[str, Any]:
    obs: dict[str, Any] = {
        "robot0_eef_pos": rng.normal(size=(batch, 3)).astype(np.float32),
        "robot0_eef_quat": rng.normal(size=(batch, 4)).astype(np.float32),
        "robot0_gripper_qpos": rng.normal(size=(batch, 2)).astype(np.float32),
        "task_description": ["pick up the black bowl and place it on the plate"] * batch,
        "episode_id": [f"libero_spatial/0/{i}" for i in range(batch)],
    }
    for cam in cameras:
        obs[f"{cam}_image"] = rng.integers(0, 256, size=(batch, resolution, resolution, 3), dtype=np.uint8)
    return obs


def median_ms(policy: Policy, obs: dict[str, Any], repeats: int) -> float:
    for _ in range(5):  # warm-up: first calls pay for lazy imports and socket buffers
        policy.act(obs)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        policy.act(obs)
        samples.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(samples)


def run(repeats: int, resolution: int) -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = Path(write_demo_checkpoint(Path(tmp)).uri)
        rng = np.random.default_rng(0)
        for n_cams in (0, 2):
            cameras = CAMERAS[:n_cams]
            spec = f"builtin:demo?cameras={','.join(cameras)}&resolution={resolution}" if cameras else "builtin:demo"
            local = load_policy(spec, ckpt)
            with PolicyServer(load_policy(spec, ckpt), port=0) as server:
                remote = load_policy(f"server:{server.url}", None)
                for batch in (1, 4, 16):
                    obs = make_obs(batch, cameras, resolution, rng)
                    local_ms = median_ms(local, obs, repeats)
                    remote_ms = median_ms(remote, obs, repeats)
                    overhead = remote_ms - local_ms
                    rows.append(
                        {
                            "cameras": n_cams,
                            "resolution": resolution,
                            "batch": batch,
                            "request_bytes": sum(v.nbytes for v in obs.values() if isinstance(v, np.ndarray)),
                            "in_process_ms": round(local_ms, 4),
                            "over_server_ms": round(remote_ms, 4),
                            "overhead_ms": round(overhead, 4),
                            "sim_step_ms_cpu": SIM_STEP_MS[n_cams],
                            "overhead_pct_of_sim_step": round(100.0 * overhead / SIM_STEP_MS[n_cams], 3),
                        }
                    )
                    print(
                        f"cameras={n_cams} batch={batch:2d}: in-process {local_ms:7.3f} ms, over server "
                        f"{remote_ms:7.3f} ms, overhead {overhead:6.3f} ms = "
                        f"{rows[-1]['overhead_pct_of_sim_step']:.2f} % of a {SIM_STEP_MS[n_cams]:.0f} ms sim step"
                    )
                remote.close()
    return {
        "benchmark": "policy_server_latency",
        "repeats": repeats,
        "host": platform.node(),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "goal": "protocol overhead < 5 % of the simulator's step time",
        "goal_met": all(r["overhead_pct_of_sim_step"] < 5.0 for r in rows),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--resolution", type=int, default=128)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "policy_server_latency.json")
    args = parser.parse_args()
    result = run(args.repeats, args.resolution)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"goal met: {result['goal_met']}; saved {args.out}")


if __name__ == "__main__":
    main()
