"""What every part of ``bench/eval_gpu.py`` shares: the work's constants, the result document, the machine,
the cores, and running a command with a deadline.

``bench/peer_vla_eval.py``, ``bench/forward_speed.py`` and ``bench/gpu_peers.py`` use the same machine
record, GPU sampler and guard on the tracked results.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: the default suite; every part takes the suite it measures as an argument (``--suite``)
SUITE, TASK, MAX_STEPS, SETTLE = "libero_spatial", 0, 220, 10
CAMERAS = ("agentview", "robot0_eye_in_hand")
RESOLUTION = 256
POLICY_SPEC = "python:bench.llama_policy:make_policy"
ZERO_ACTION = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])


class Report:
    """The result document, rewritten atomically after every figure."""

    def __init__(self, path: Path, argv: list[str], args: argparse.Namespace) -> None:
        self.path = path
        self.doc: dict[str, Any] = {
            "benchmark": "eval_gpu",
            "suite": args.suite,
            "task": TASK,
            "cameras": list(CAMERAS),
            "resolution": args.resolution,  # what this run used, not the default
            "max_steps": args.max_steps,
            "settle_steps": SETTLE,
            "machine": machine(),
            "commands": [shlex.join([Path(sys.executable).name, *argv])],
        }
        self.save()

    def put(self, key: str, sub: str | None, value: Any) -> None:
        if sub is None:
            self.doc[key] = value
        else:
            self.doc.setdefault(key, {})[sub] = value
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.doc, indent=2) + "\n")
        tmp.replace(self.path)


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"cores": len(os.sched_getaffinity(0)), "cpu": platform.processor() or platform.machine()}
    try:
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        info["gpus"] = [line.strip() for line in smi.stdout.splitlines() if line.strip()]
    except (OSError, subprocess.SubprocessError) as exc:
        info["gpus"] = f"nvidia-smi unavailable: {exc}"
    return info


def command_line(script: str, argv: list[str] | None) -> str:
    """The command a bench ran with, for its results file: this interpreter and ``argv`` (or the real argv)."""
    return " ".join([Path(sys.executable).name, *(sys.argv if argv is None else [script, *argv])])


def results_path(out: Path | None, *, update_results: bool, name: str = "eval_gpu.json") -> Path:
    """Where the figures go: ``out``, or $OUT/``name``, or a temporary file; never into the tracked
    ``bench/results/`` unless ``update_results`` (a smoke run once overwrote the published figures)."""
    if out is None:
        folder = os.environ.get("OUT")
        return Path(folder) / name if folder else Path(tempfile.mkdtemp(prefix="eval-gpu-")) / name
    tracked = (ROOT / "bench" / "results").resolve()
    if not update_results and out.resolve().is_relative_to(tracked):
        raise SystemExit(
            f"--out {out} is inside bench/results/, the published figures: add --update-results to replace them, "
            "or write elsewhere (e.g. --out $OUT/eval_gpu.json) and --combine into it later"
        )
    return out


def combine(files: list[Path], out: Path) -> int:
    """Merge separate runs' result files into ``out`` (parts side by side, commands appended)."""
    doc: dict[str, Any] = {}
    for f in files:
        part = json.loads(f.read_text())
        for key, value in part.items():
            if key == "commands":
                doc.setdefault("commands", []).extend(value)
            elif isinstance(value, dict) and isinstance(doc.get(key), dict) and key != "machine":
                doc[key].update(value)
            else:
                doc[key] = value
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"combined {len(files)} files into {out}")
    return 0


def split_cpus(server_cores: int) -> tuple[list[int], list[int]]:
    """(the policy server's cores, the evaluation's cores): the first ``server_cores`` of this process's."""
    cpus = sorted(os.sched_getaffinity(0))
    if not 0 <= server_cores < len(cpus):
        raise SystemExit(f"--server-cores {server_cores}: give 0 to {len(cpus) - 1} of the {len(cpus)} cores here")
    return cpus[:server_cores], cpus[server_cores:]


def _pinned(cpus: list[int] | None) -> Any:
    if not cpus:
        return None
    return lambda: os.sched_setaffinity(0, cpus)  # the child and every worker it spawns stay on these cores


def run_cli(args: list[str], log_path: Path, timeout: float, cpus: list[int] | None = None) -> tuple[int, float]:
    """Run a command with its output in ``log_path``; exit 124 when it outlives ``timeout`` (then killed)."""
    t0 = time.perf_counter()
    with log_path.open("w") as log:
        try:
            rc = subprocess.run(
                args, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, timeout=timeout, preexec_fn=_pinned(cpus)
            ).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    return rc, time.perf_counter() - t0


class GpmSampler:
    """The gpu probe's NVML sampler (SM activity through GPM) on a thread, for the length of a run."""

    def __init__(self, interval_s: float = 1.0) -> None:
        self.interval_s = interval_s
        self._stop = threading.Event()
        self.result: dict[str, Any] = {}
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> GpmSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        try:
            from infra_probes.api import DeviceSampler, load_nvml

            nvml = load_nvml()
            sampler = DeviceSampler(nvml, 0)
            sampler.start()
            while not self._stop.wait(self.interval_s):
                sampler.sample()
            series = sampler.finish()["series"]
            nvml.nvmlShutdown()
            self.result = {
                "gpm_supported": sampler.gpm_supported,
                "samples": len(series.get("util_pct", [])),
                **{f"mean_{k}": round(float(np.mean(v)), 1) for k, v in series.items() if v},
            }
        except Exception as exc:  # no NVML here: the run's figures still count
            self.result = {"error": f"{type(exc).__name__}: {exc}"}
