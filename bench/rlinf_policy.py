"""The ``rlinf:`` policy on the CPU: load time, batch invariance, and its own cost per call.

Measures, with rlinf's ``mlp_policy`` (LIBERO's 8-d state in, 7 actions out) saved in RLinf's layout:

- load: ``load_policy("rlinf:...")`` in a fresh process (import rlinf, ``get_model``, strict load), seconds;
- batch invariance: rows predicted in passes of 1..15 rows against the same rows in one pass of 64,
  unpadded (``batch=0``) and padded to 16 (the default): how many rows differ, and by how much;
- overhead: median time of ``act`` for 15 rows, padded vs unpadded, and with two 256 px cameras
  converted the way RLinf's LIBERO env does (rotation, tensors) for a model that reads images;
- chunks: model calls per ``act`` with ``num_action_chunks: 8``.

Run: ``.venv-rlinf/bin/python bench/rlinf_policy.py`` (rlinf lives in that venv; ``make bench`` uses it);
writes bench/results/rlinf_policy.json.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval_runner.api import load_policy  # noqa: E402
from tests.policy_fixtures import make_obs  # noqa: E402


def _rows(obs: dict[str, Any], idx: list[int]) -> dict[str, Any]:
    return {k: [v[i] for i in idx] if isinstance(v, list) else v[idx] for k, v in obs.items()}


def invariance(spec: str, step: Path) -> dict[str, Any]:
    obs = make_obs(64, seed=3)
    obs["episode_id"] = [f"t0-s{i}-a0" for i in range(64)]
    reference = load_policy(spec, step).act(obs)
    differing, worst = 0, 0.0
    for size in range(1, 16):
        for start in range(0, 64 - size, 16):
            idx = list(range(start, start + size))
            got = load_policy(spec, step).act(_rows(obs, idx))
            delta = float(np.abs(got - reference[idx]).max())
            differing += int((got != reference[idx]).any(axis=1).sum())
            worst = max(worst, delta)
    return {"rows_differing": differing, "max_abs_diff": worst}


def median_act_ms(policy: Any, obs: dict[str, Any], repeats: int = 50) -> float:
    times = []
    for _ in range(repeats):
        policy.reset(obs["episode_id"])
        t0 = time.perf_counter()
        policy.act(obs)
        times.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(times), 3)


def main() -> None:
    from tests import rlinf_fixtures as F  # imports rlinf: only in .venv-rlinf

    out: dict[str, Any] = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        step = F.write_checkpoint(root / "exp", F.build(F.mlp_section(), seed=1))
        config = F.write_run_config(root / "config.yaml", F.mlp_section())
        t0 = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-c",
                f"from eval_runner.api import load_policy; load_policy('rlinf:{config}', __import__('pathlib').Path('{step}'))",
            ],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        out["load_s_fresh_process"] = round(time.perf_counter() - t0, 2)
        out["invariance_unpadded"] = invariance(f"rlinf:{config}?batch=0", step)
        out["invariance_padded_16"] = invariance(f"rlinf:{config}", step)
        obs = make_obs(15)
        out["act_ms_15_rows_padded_16"] = median_act_ms(load_policy(f"rlinf:{config}", step), obs)
        out["act_ms_15_rows_unpadded"] = median_act_ms(load_policy(f"rlinf:{config}?batch=0", step), obs)
        images = make_obs(15, cameras=("agentview", "robot0_eye_in_hand"), resolution=256)
        chunk_cfg = F.write_run_config(root / "chunk.yaml", F.chunk_section(8))
        image_policy = load_policy(f"rlinf:{chunk_cfg}?plugins=tests.rlinf_fixtures&images=2", None)
        out["act_ms_15_rows_two_256px_cameras"] = median_act_ms(image_policy, images)
        chunked = load_policy(f"rlinf:{chunk_cfg}?plugins=tests.rlinf_fixtures&images=0", None)
        chunked.reset(obs["episode_id"])
        for _ in range(64):
            chunked.act(obs)
        out["chunk8_model_calls_per_64_acts"] = chunked.model_calls  # type: ignore[attr-defined]
    path = ROOT / "bench" / "results" / "rlinf_policy.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
