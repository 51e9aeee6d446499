"""Validate the infrastructure probes against independent tools on the same machine, in one run.

- storage: the probe vs ``dd oflag=direct`` / ``iflag=direct`` on the same directory (ratio, alternating runs);
- nccl: the probe's busbw vs a raw NCCL all-reduce through CuPy's NCCL binding (GPU mode), same sizes;
- gpu: the probe while the GPUs idle, run an all-reduce, and run bf16 matmuls (SM activity vs NVML utilization);
- checkpoint_io: a model-sized save/load.

CPU mode (what ``make bench`` runs): storage vs dd on a real disk, the nccl probe over gloo, a small checkpoint.
GPU mode is run on the device machine; see docs/performance.md for the exact command.

    python bench/probe_validation.py --mode cpu --out bench/results
    python bench/probe_validation.py --mode gpu --out $OUT --scratch /var/tmp/probe --ckpt-params 7.5e9
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
COMMANDS: list[str] = []


def probe(*args: str) -> dict[str, Any]:
    """Run ``python -m infra_probes ... --json`` as a user would and return the ProbeResult dict."""
    cmd = [sys.executable, "-m", "infra_probes", *args, "--json"]
    COMMANDS.append(" ".join(["python -m infra_probes", *args, "--json"]))
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
    if not proc.stdout.strip():
        raise RuntimeError(f"{' '.join(cmd)} printed nothing (rc {proc.returncode}): {proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def value(result: dict[str, Any], name: str) -> float:
    return float(result["values"][name]["value"])


# ---------------------------------------------------------------- storage vs dd
_DD_RE = re.compile(r"^(\d+) bytes .* copied, ([\d.]+) s", re.MULTILINE)


def dd(args: list[str]) -> float:
    """MB/s (1e6 B) from dd's own byte count and seconds."""
    COMMANDS.append("dd " + " ".join(args))
    proc = subprocess.run(["dd", *args], capture_output=True, text=True, check=True)
    match = _DD_RE.search(proc.stderr)
    if not match:
        raise RuntimeError(f"cannot read dd's summary: {proc.stderr}")
    return int(match.group(1)) / float(match.group(2)) / 1e6


def storage_vs_dd(scratch: Path, size_mib: int, block_mib: int, repeats: int) -> dict[str, Any]:
    """Alternate probe and dd runs on the same directory; medians and ratios.

    dd runs twice per round: from /dev/zero (the brief's command) and from a file of random bytes on
    /dev/shm, because some block devices and file systems write zeros at a different speed than data
    (compression, zero detection); the random-source dd is the like-for-like comparison.
    """
    count = size_mib // block_mib
    source = Path("/dev/shm") / f"rlinf-probe-random-{os.getpid()}.bin"
    with source.open("wb") as fh:
        for _ in range(count):
            fh.write(os.urandom(block_mib << 20))
    rows = []
    res: dict[str, Any] = {}
    target = scratch / "dd-bench.bin"
    try:
        for round_no in range(repeats):
            # Rotate which tool goes first: the disk's state after the previous writer (host-side write-back)
            # otherwise favours whoever always runs in the same slot.
            order = ["probe", "dd", "fio"]
            order = order[round_no % 3 :] + order[: round_no % 3]
            row: dict[str, Any] = {"order": order}
            for tool in order:
                if tool == "probe":
                    res = _storage_probe_once(scratch, size_mib, block_mib, row)
                elif tool == "dd":
                    _dd_once(source, target, count, block_mib, row)
                else:
                    row.update(fio(scratch, size_mib, block_mib))
            rows.append(row)
    finally:
        target.unlink(missing_ok=True)
        source.unlink(missing_ok=True)
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0] if k != "order"}
    ratios = {
        # dd from /dev/zero is the brief's command; dd from a random file pays a serial copy per block.
        "write_ratio_vs_dd_zero": med["probe_write_mb_s"] / med["dd_zero_write_mb_s"],
        "write_ratio_vs_dd_random": med["probe_write_mb_s"] / med["dd_random_write_mb_s"],
        "read_ratio_vs_dd": med["probe_read_mb_s"] / med["dd_read_mb_s"],
    }
    if "fio_write_mb_s" in med:
        ratios["write_ratio_vs_fio"] = med["probe_write_mb_s"] / med["fio_write_mb_s"]
        ratios["read_ratio_vs_fio"] = med["probe_read_mb_s"] / med["fio_read_mb_s"]
        ratios["hugepages_write_ratio_vs_fio"] = med["probe_huge_write_mb_s"] / med["fio_write_mb_s"]
        ratios["hugepages_read_ratio_vs_fio"] = med["probe_huge_read_mb_s"] / med["fio_read_mb_s"]
    ratios["hugepages_read_ratio_vs_dd"] = med["probe_huge_read_mb_s"] / med["dd_read_mb_s"]
    return {
        **ratios,
        "path": str(scratch),
        "file_system": res["details"]["file_system"],
        "size_mib": size_mib,
        "block_mib": block_mib,
        "runs": rows,
        "median": med,
        "last_probe_result": res,
    }


def _storage_probe_once(scratch: Path, size_mib: int, block_mib: int, row: dict[str, Any]) -> dict[str, Any]:
    res = probe("storage", "--path", str(scratch), "--size", f"{size_mib}M", "--block-size", f"{block_mib}M")
    row["probe_write_mb_s"] = value(res, "write_mb_s")
    row["probe_read_mb_s"] = value(res, "read_mb_s")
    huge = probe(
        "storage", "--path", str(scratch), "--size", f"{size_mib}M", "--block-size", f"{block_mib}M", "--hugepages"
    )
    row["probe_huge_write_mb_s"] = value(huge, "write_mb_s")
    row["probe_huge_read_mb_s"] = value(huge, "read_mb_s")
    return res


def _dd_once(source: Path, target: Path, count: int, block_mib: int, row: dict[str, Any]) -> None:
    common = [f"of={target}", f"bs={block_mib}M", f"count={count}", "oflag=direct", "conv=fsync"]
    row["dd_random_write_mb_s"] = dd([f"if={source}", *common])
    row["dd_read_mb_s"] = dd([f"if={target}", "of=/dev/null", f"bs={block_mib}M", "iflag=direct"])
    row["dd_zero_write_mb_s"] = dd(["if=/dev/zero", *common])
    row["dd_random_source_only_mb_s"] = dd([f"if={source}", "of=/dev/null", f"bs={block_mib}M"])
    target.unlink(missing_ok=True)


def fio(scratch: Path, size_mib: int, block_mib: int) -> dict[str, float]:
    """fio's sequential write then read (O_DIRECT, one synchronous stream), when fio is installed."""
    if shutil.which("fio") is None:
        return {}
    out = {}
    for rw in ("write", "read"):
        args = [
            f"--name=seq{rw}",
            f"--filename={scratch / 'fio-bench.bin'}",
            f"--rw={rw}",
            f"--bs={block_mib}M",
            f"--size={size_mib}M",
            "--direct=1",
            "--ioengine=sync",
            "--end_fsync=1",
            "--output-format=json",
        ]
        COMMANDS.append("fio " + " ".join(args))
        proc = subprocess.run(["fio", *args], capture_output=True, text=True, check=True)
        out[f"fio_{rw}_mb_s"] = json.loads(proc.stdout)["jobs"][0][rw]["bw_bytes"] / 1e6
    (scratch / "fio-bench.bin").unlink(missing_ok=True)
    return out


# ---------------------------------------------------------------- raw NCCL through CuPy
def _raw_rank(rank: int, world: int, uid: Any, sizes: list[int], iters: int, warmup: int, queue: Any) -> None:
    import cupy
    from cupy.cuda import nccl

    cupy.cuda.Device(rank).use()
    comm = nccl.NcclCommunicator(world, uid, rank)
    stream = cupy.cuda.Stream(non_blocking=True)
    rows = []
    for size in sizes:
        buf = cupy.zeros(size // 4, dtype=cupy.float32)
        ptr, count = buf.data.ptr, buf.size
        for _ in range(warmup):
            comm.allReduce(ptr, ptr, count, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, stream.ptr)
        stream.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            comm.allReduce(ptr, ptr, count, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, stream.ptr)
        stream.synchronize()
        rows.append((size, (time.perf_counter() - t0) / iters))
        del buf
    queue.put((rank, rows))


def raw_nccl(world: int, sizes: list[int], iters: int, warmup: int) -> list[dict[str, Any]]:
    """Per-size busbw of a plain ncclAllReduce (in place, float32, sum), slowest rank's time."""
    import multiprocessing as mp

    from cupy.cuda import nccl

    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    uid = nccl.get_unique_id()
    procs = [ctx.Process(target=_raw_rank, args=(r, world, uid, sizes, iters, warmup, queue)) for r in range(world)]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=600) for _ in procs)
    for p in procs:
        p.join()
    rows = []
    for i, size in enumerate(sizes):
        seconds = max(results[r][i][1] for r in range(world))
        algbw = size / seconds / 1e9
        rows.append(
            {
                "bytes": size,
                "time_us": seconds * 1e6,
                "algbw_gbps": algbw,
                "busbw_gbps": algbw * 2 * (world - 1) / world,
            }
        )
    COMMANDS.append(
        f"raw CuPy ncclAllReduce, {world} ranks, in place float32 sum, {iters} iters after {warmup} warm-up"
    )
    return rows


def nccl_vs_raw(world: int) -> dict[str, Any]:
    sizes = [1 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30, 4 << 30]
    raw_before = raw_nccl(world, sizes, iters=20, warmup=5)
    res = probe("nccl", "--nproc", str(world), "-b", "1M", "-e", "4G", "-f", "4", "--verdict-bytes", "1G")
    raw_after = raw_nccl(world, sizes, iters=20, warmup=5)
    table = {r["bytes"]: r for r in res["details"]["table"]}
    rows = []
    for before, after in zip(raw_before, raw_after, strict=True):
        raw_bus = (before["busbw_gbps"] + after["busbw_gbps"]) / 2
        row = table.get(before["bytes"])
        rows.append(
            {
                "bytes": before["bytes"],
                "raw_busbw_gbps": raw_bus,
                "raw_runs": [before["busbw_gbps"], after["busbw_gbps"]],
                "probe_busbw_gbps": row["busbw_gbps"] if row else None,
                "ratio": row["busbw_gbps"] / raw_bus if row else None,
            }
        )
    at_1g = next(r for r in rows if r["bytes"] == 1 << 30)
    return {"rows": rows, "ratio_at_1GiB": at_1g["ratio"], "probe_result": res}


# ---------------------------------------------------------------- GPU load for the gpu probe
def load_main(kind: str, seconds: float) -> None:
    """Keep the GPUs busy with ``kind`` (allreduce over all GPUs, or bf16 matmul on each) for ``seconds``."""
    import torch
    import torch.multiprocessing as mp

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    mp.start_processes(
        _load_rank,
        args=(torch.cuda.device_count(), kind, seconds),
        nprocs=torch.cuda.device_count(),
        start_method="spawn",
    )


def _load_rank(rank: int, world: int, kind: str, seconds: float) -> None:
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    end = time.monotonic() + seconds
    if kind == "sleep":
        # One thread spinning in one kernel: NVML utilization reads ~100 %, SM activity ~1/132.
        while time.monotonic() < end:
            torch.cuda._sleep(500_000_000)
            torch.cuda.synchronize()
        return
    if kind == "matmul":
        a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        while time.monotonic() < end:
            for _ in range(20):
                a @ a
            torch.cuda.synchronize()
        return
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    buf = torch.zeros(1 << 28, device="cuda")
    while True:
        for _ in range(10):
            dist.all_reduce(buf)
        torch.cuda.synchronize()
        flag = torch.tensor([1 if time.monotonic() < end else 0], device="cuda")
        dist.all_reduce(flag, op=dist.ReduceOp.MIN)
        if not flag.item():
            break
    dist.destroy_process_group()


def gpu_under_loads(window_s: float, loads: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"idle": probe("gpu", "--window-s", "3", "--interval-s", "0.5")}
    for kind in loads:
        COMMANDS.append(f"python bench/probe_validation.py load --kind {kind} (in the background)")
        load = subprocess.Popen(
            [sys.executable, __file__, "load", "--kind", kind, "--seconds", str(window_s + 25)], cwd=REPO
        )
        try:
            time.sleep(12)  # let the processes start and reach their steady loop
            out[kind] = probe("gpu", "--window-s", str(window_s), "--interval-s", "0.5")
        finally:
            load.wait(timeout=window_s + 120)
    keys = ("util_pct", "sm_active_pct", "tensor_active_pct", "dram_bw_pct", "power_w")
    out["summary"] = {
        k: {name: res["values"].get(name, {}).get("value") for name in keys} | {"verdict": res["verdict"]}
        for k, res in out.items()
    }
    return out


# ---------------------------------------------------------------- main
def _nccl_part(gpu: bool) -> dict[str, Any]:
    if gpu:
        import torch

        return nccl_vs_raw(torch.cuda.device_count())
    res = probe(
        "nccl", "--nproc", "2", "--backend", "gloo", "-b", "64K", "-e", "16M", "-f", "4", "--verdict-bytes", "16M"
    )
    return {"probe_result": res, "busbw_gbps_at_16MiB": value(res, "busbw_gbps")}


def _checkpoint_part(scratch: Path, params: float) -> dict[str, Any]:
    res = probe("checkpoint_io", "--path", str(scratch), "--params", f"{params:g}")
    return {"params": params, "values": {k: v["value"] for k, v in res["values"].items()}, "probe_result": res}


def _headline(name: str, part: dict[str, Any]) -> Any:
    if "error" in part:
        return part
    picks = {
        "storage": (
            "median",
            "write_ratio_vs_dd_zero",
            "write_ratio_vs_dd_random",
            "read_ratio_vs_dd",
            "write_ratio_vs_fio",
            "read_ratio_vs_fio",
            "hugepages_write_ratio_vs_fio",
            "hugepages_read_ratio_vs_fio",
            "hugepages_read_ratio_vs_dd",
        ),
        "nccl": ("rows", "ratio_at_1GiB", "busbw_gbps_at_16MiB"),
        "gpu": ("summary",),
        "checkpoint_io": ("values",),
    }[name]
    return {k: part[k] for k in picks if k in part}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", default="validate", choices=["validate", "load"])
    parser.add_argument("--mode", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument("--out", default=str(REPO / "bench" / "results"))
    parser.add_argument("--tag", default="", help="suffix of the results file (default: the mode)")
    parser.add_argument("--scratch", help="directory on the file system to measure (default: a dir under /var/tmp)")
    parser.add_argument("--storage-mib", type=int, default=0, help="storage bytes per run (default 256 cpu, 4096 gpu)")
    parser.add_argument("--storage-repeats", type=int, default=3, help="rounds of probe/dd/fio (order rotates)")
    parser.add_argument("--ckpt-params", type=float, default=0, help="checkpoint_io parameters (default 5e7 cpu)")
    parser.add_argument("--parts", default="storage,nccl,gpu,checkpoint_io")
    parser.add_argument("--gpu-loads", default="allreduce,matmul", help="loads to run the gpu probe under")
    parser.add_argument("--kind", default="allreduce")
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    if args.command == "load":
        load_main(args.kind, args.seconds)
        return 0
    parts = set(args.parts.split(","))
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="rlinf-probe-", dir="/var/tmp"))
    scratch.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"mode": args.mode, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    gpu = args.mode == "gpu"
    out = Path(args.out) / f"probes_{args.tag or args.mode}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    steps = {
        "storage": lambda: storage_vs_dd(
            scratch, args.storage_mib or (4096 if gpu else 1024), 16, args.storage_repeats
        ),
        "nccl": lambda: _nccl_part(gpu),
        "gpu": lambda: gpu_under_loads(10, args.gpu_loads.split(",")) if gpu else None,
        "checkpoint_io": lambda: _checkpoint_part(scratch, args.ckpt_params or 5e7),
    }
    try:
        for name, step in steps.items():
            if name not in parts:
                continue
            try:
                part = step()
            except Exception as exc:  # keep what the other parts measured; the error is in the report
                part = {"error": f"{type(exc).__name__}: {exc}"}
            if part is not None:
                report[name] = part
                print(name, json.dumps(_headline(name, part), default=str), flush=True)
            report["commands"] = COMMANDS
            out.write_text(json.dumps(report, indent=2, default=str))
    finally:
        if not args.scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    print("wrote", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
