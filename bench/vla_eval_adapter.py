"""The 7B stand-in (``bench/llama_policy.py``) served in vla-eval's own protocol, for ``bench/peer_vla_eval.py``.

vla-eval's harness talks to a model server over a WebSocket (msgpack frames, one observation per
message). Its ``PredictModelServer`` batches observations across connections (``max_batch_size``,
``max_wait_time``) and keeps each session's action chunk, answering the chunk's later steps from the
buffer without calling the model. This adapter plugs the same model our harness serves into that
class: ``predict_batch`` maps vla-eval's LIBERO observation (``images.agentview``, ``images.wrist``,
the 8-D ``states``, ``task_description``) onto the stand-in's inputs and returns each row's
``[chunk, 7]`` actions, which vla-eval executes open loop, as our runner does.

The model's weights are random, so the success rate is 0 % in both harnesses: the comparison is of
time for the same work (episodes, steps, forwards of the same network at the same batch sizes).

Run (on the GPU machine, vla-eval importable)::

    python bench/vla_eval_adapter.py --port 8766 --max-batch 16 --stats stats.json
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.llama_policy import CAMERAS, make_policy, option_value  # noqa: E402
from eval_runner.api import limit_torch_threads, pin_process, reserved_cpus  # noqa: E402

#: vla-eval's LIBERO image keys, in the order of the stand-in's cameras
VLA_EVAL_IMAGES = ("agentview", "wrist")


def stand_in_inputs(observations: list[dict[str, Any]]) -> dict[str, Any]:
    """vla-eval LIBERO observations -> the stand-in's observation dict (the keys ``ChunkedVLA.infer`` reads).

    vla-eval sends the end effector's orientation as an axis-angle (3 values) where our harness sends
    the quaternion (4): the fourth value is zero. The network's compute does not depend on the values.
    """
    images = {
        f"{camera}_image": np.stack([np.asarray(o["images"][key], dtype=np.uint8) for o in observations])
        for camera, key in zip(CAMERAS, VLA_EVAL_IMAGES, strict=True)
    }
    states = np.stack([np.asarray(o.get("states", np.zeros(8)), dtype=np.float32) for o in observations])
    return {
        **images,
        "robot0_eef_pos": states[:, 0:3],
        "robot0_eef_quat": np.concatenate([states[:, 3:6], np.zeros((len(states), 1), np.float32)], axis=1),
        "robot0_gripper_qpos": states[:, 6:8],
        "task_description": [str(o.get("task_description", "")) for o in observations],
    }


class ServerStats:
    """What the model saw: forwards, rows, batch sizes, busy time (thread-safe; written as JSON at exit)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.forwards = 0
        self.rows = 0
        self.busy_s = 0.0
        self.batch_sizes: dict[int, int] = {}
        self.first_call: float | None = None
        self.last_call: float | None = None

    def add(self, rows: int, seconds: float) -> None:
        with self._lock:
            now = time.time()
            self.first_call = self.first_call or now - seconds
            self.last_call = now
            self.forwards += 1
            self.rows += rows
            self.busy_s += seconds
            self.batch_sizes[rows] = self.batch_sizes.get(rows, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            span = (self.last_call or 0.0) - (self.first_call or 0.0)
            return {
                "forwards": self.forwards,
                "rows": self.rows,
                "mean_rows_per_forward": round(self.rows / self.forwards, 2) if self.forwards else None,
                "model_busy_s": round(self.busy_s, 1),
                "rows_per_s": round(self.rows / span, 1) if span > 0 else None,
                "batch_sizes": dict(sorted(self.batch_sizes.items())),
            }


def make_server(policy: Any, *, max_batch: int, max_wait_s: float, stats: ServerStats) -> Any:
    """A vla-eval ``PredictModelServer`` around ``policy`` (a ``ChunkedVLA``), batching up to ``max_batch`` rows."""
    from vla_eval.model_servers.predict import PredictModelServer
    from vla_eval.specs import (
        GRIPPER_CLOSE_POS,
        IMAGE_RGB,
        LANGUAGE,
        POSITION_DELTA,
        ROTATION_AA,
        STATE_EEF_POS_AA_GRIP,
    )

    class StandInServer(PredictModelServer):  # type: ignore[misc]
        def get_observation_params(self) -> dict[str, Any]:
            return {"send_wrist_image": True, "send_state": True}

        def get_action_spec(self) -> dict[str, Any]:
            return {"position": POSITION_DELTA, "rotation": ROTATION_AA, "gripper": GRIPPER_CLOSE_POS}

        def get_observation_spec(self) -> dict[str, Any]:
            return {"agentview": IMAGE_RGB, "wrist": IMAGE_RGB, "state": STATE_EEF_POS_AA_GRIP, "language": LANGUAGE}

        def predict_batch(self, obs_batch: list[Any], ctx_batch: list[Any]) -> list[dict[str, Any]]:
            start = time.perf_counter()
            chunks = policy.infer(stand_in_inputs(obs_batch))  # [B, chunk, 7], gripper already +-1
            stats.add(len(obs_batch), time.perf_counter() - start)
            return [{"actions": chunk} for chunk in chunks]

    return StandInServer(chunk_size=policy.chunk, max_batch_size=max_batch, max_wait_time=max_wait_s)


def policy_options(text: str) -> dict[str, Any]:
    """``'layers=1,device=cpu,backbone=lean'`` -> make_policy's keyword arguments (numbers as numbers)."""
    pairs = [item.partition("=") for item in text.split(",") if item]
    return {key: option_value(value) for key, _, value in pairs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--max-batch", type=int, default=16, help="vla-eval's max_batch_size")
    parser.add_argument("--max-wait-ms", type=float, default=10.0, help="vla-eval's max_wait_time (its default: 10)")
    parser.add_argument("--stats", type=Path, required=True, help="JSON written at exit (SIGTERM or SIGINT)")
    parser.add_argument(
        "--policy-args", default="", help="make_policy options, e.g. 'layers=1,hidden=64,device=cpu' (smoke)"
    )
    parser.add_argument("--cpus", help="cores to pin the server to once the policy is loaded, e.g. 0 or 0-1")
    args = parser.parse_args()
    cpus = reserved_cpus(args.cpus)  # a core that does not exist is refused before the load
    if args.cpus is not None:
        limit_torch_threads(len(cpus))  # before the load, as serve-policy: a compiled model guards on it
    policy = make_policy(**policy_options(args.policy_args))
    policy.infer(stand_in_inputs([_example_observation(policy.obs_spec.resolution)]))  # warm-up, as serve-policy
    if args.cpus is not None:
        pin_process(cpus)
    stats = ServerStats()
    server = make_server(policy, max_batch=args.max_batch, max_wait_s=args.max_wait_ms / 1000, stats=stats)

    def finish(*_: object) -> None:
        args.stats.write_text(json.dumps({"policy": policy.describe(), **stats.as_dict()}, indent=1))
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    from vla_eval.model_servers.serve import serve

    print(f"serving ws://{args.host}:{args.port}", flush=True)
    serve(server, args.host, args.port)
    return 0


def _example_observation(resolution: int) -> dict[str, Any]:
    image = np.zeros((resolution, resolution, 3), np.uint8)
    return {"images": {"agentview": image, "wrist": image}, "states": np.zeros(8), "task_description": "warm up"}


if __name__ == "__main__":
    sys.exit(main())
