"""Run NVIDIA nccl-tests' ``all_reduce_perf`` where it is installed, and read its text or ``-J`` JSON output.

The rows become the same per-size table the torch.distributed probe produces, so both are judged
the same way: at one size, never on the "Avg bus bandwidth" line (a mean over every size swept).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from rlinf_bench.errors import ProbeError, ProbeUnavailableError

_TYPE_NAMES = {"float": "float32", "half": "float16", "bfloat16": "bfloat16", "double": "float64"}


def parse_text(output: str) -> list[dict[str, Any]]:
    """Rows of all_reduce_perf's stdout table; the in-place columns are used (what training does)."""
    rows: list[dict[str, Any]] = []
    for line in output.splitlines():
        parts = line.split()
        if (
            not parts
            or line.lstrip().startswith("#")
            or not (parts[0].isascii() and parts[0].isdigit())
            or len(parts) < 13
        ):
            continue
        try:
            size, count = int(parts[0]), int(parts[1])
            oop = _floats(parts[5:9])
            inp = _floats(parts[9:13])
        except ValueError:
            continue
        rows.append(_row(size, count, parts[2], inp or oop))
    if not rows:
        raise ProbeError("no result rows found in the nccl-tests output; was it all_reduce_perf, and did it finish?")
    return rows


def _floats(cells: list[str]) -> tuple[float, float, float, int | None] | None:
    time_us, algbw, busbw = float(cells[0]), float(cells[1]), float(cells[2])
    wrong = None if cells[3] == "N/A" else int(float(cells[3]))
    return time_us, algbw, busbw, wrong


def _row(size: int, count: int, type_name: str, cells: tuple[float, float, float, int | None] | None) -> dict[str, Any]:
    if cells is None:
        raise ProbeError(f"nccl-tests row for {size} bytes has no timing columns")
    time_us, algbw, busbw, wrong = cells
    return {
        "bytes": size,
        "count": count,
        "dtype": _TYPE_NAMES.get(type_name, type_name),
        "time_us": time_us,
        "algbw_gbps": algbw,
        "busbw_gbps": busbw,
        "wrong": wrong if wrong is not None else 0,
        "checked": wrong is not None,
    }


def parse_json(document: str | dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of the ``-J`` JSON report (nccl-tests >= 2.18.5): ``results[].in_place|out_of_place``."""
    data = json.loads(document) if isinstance(document, str) else document
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list) or not results:
        raise ProbeError("the nccl-tests JSON report has no 'results' list; was the run complete?")
    rows = []
    for entry in results:
        part = entry.get("in_place") or entry.get("out_of_place")
        if not part:
            continue
        wrong = part.get("nwrong")
        cells = (
            float(part.get("time", part.get("cpu_time", "nan"))),
            float(part["alg_bw"]),
            float(part["bus_bw"]),
            None if wrong is None else int(float(wrong)),
        )
        rows.append(_row(int(entry["size"]), int(entry["count"]), str(entry.get("type", "")), cells))
    return rows


def run_all_reduce_perf(
    binary: str, args: list[str], *, timeout_s: float = 1800.0
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run ``all_reduce_perf ARGS -J <tmp>``; parse the JSON if it was written, else the text table."""
    path = shutil.which(binary) or (binary if Path(binary).is_file() else None)
    if path is None:
        raise ProbeUnavailableError(f"nccl-tests binary {binary!r} not found; install nccl-tests or drop --nccl-tests")
    with tempfile.TemporaryDirectory(prefix="rlinf-bench-nccl-tests-") as tmp:
        report = Path(tmp) / "report.json"
        cmd = [path, *args, "-J", str(report)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired as exc:
            raise ProbeError(f"{' '.join(cmd)} did not finish within {timeout_s:g} s") from exc
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise ProbeError(f"{' '.join(cmd)} exited with {proc.returncode}: {' | '.join(tail)}")
        meta: dict[str, Any] = {"command": cmd}
        if report.exists():
            data = json.loads(report.read_text())
            meta["nccl_version"] = data.get("nccl_version")
            meta["format"] = "json"
            return parse_json(data), meta
        meta["format"] = "text"  # older nccl-tests ignore -J
        return parse_text(proc.stdout), meta
