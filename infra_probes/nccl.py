"""NCCL probe: all-reduce bandwidth through torch.distributed (NCCL on GPUs, gloo on CPUs).

Formulas are nccl-tests': ``algbw = bytes / time`` and ``busbw = algbw * 2(n-1)/n``; time is the
slowest rank's mean over the timed iterations. The verdict is taken at ONE size (1 GiB by default):
nccl-tests' "Avg bus bandwidth" averages over every size swept, which mostly measures latency.
Each size's sums are checked once on every rank, so a GPU or link that corrupts data fails the
probe even when it is fast.

Launch: under torchrun (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set; one process per GPU, any
number of nodes), or on its own with ``--nproc N`` where it spawns N local ranks on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from infra_probes.common import Outcome, format_size, m, parse_size
from infra_probes.environment import detect_environment
from infra_probes.progress import say
from infra_probes.targets import default_nccl_target, resolve_target
from rlinf_bench.contracts import ProbeEnvironment
from rlinf_bench.errors import ProbeError, ProbeUnavailableError

ELEMENT_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


class NcclSettings(BaseModel):
    """Sweep, iterations and launch of the all-reduce probe."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["auto", "nccl", "gloo"] = "auto"
    nproc: int | None = Field(default=None, ge=1, description="Local ranks to spawn when not under torchrun")
    min_bytes: int = Field(default=1 << 20, gt=0)
    max_bytes: int = Field(default=1 << 30, gt=0)
    factor: int = Field(default=2, ge=2)
    iters: int = Field(default=20, ge=1)
    warmup: int = Field(default=5, ge=0)
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    verdict_bytes: int = Field(default=1 << 30, gt=0)
    expected_world_size: int | None = Field(default=None, ge=1)
    nodes: int | None = Field(default=None, ge=1)
    rendezvous_timeout_s: float = Field(default=120.0, gt=0)
    corrupt_rank: int | None = Field(default=None, description="Test hook: this rank perturbs one input element")
    nccl_tests: str | None = Field(default=None, description="Run this all_reduce_perf binary instead")
    nccl_tests_args: list[str] = Field(default_factory=lambda: ["-b", "1M", "-e", "1G", "-f", "2"])
    nccl_tests_output: str | None = Field(default=None, description="Parse this saved nccl-tests output (text/JSON)")
    instance_type: str | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", default="auto", choices=["auto", "nccl", "gloo"], help="auto: nccl with GPUs")
    parser.add_argument("--nproc", type=int, help="local ranks to spawn when not launched by torchrun")
    parser.add_argument("--min-bytes", "-b", default="1M", help="smallest message (default 1M)")
    parser.add_argument("--max-bytes", "-e", default="1G", help="largest message (default 1G)")
    parser.add_argument("--factor", "-f", type=int, default=2, help="size multiplier between steps")
    parser.add_argument("--iters", "-n", type=int, default=20, help="timed iterations per size")
    parser.add_argument("--warmup", "-w", type=int, default=5, help="untimed iterations per size")
    parser.add_argument("--dtype", default="float32", choices=sorted(ELEMENT_BYTES))
    parser.add_argument("--verdict-bytes", default="1G", help="message size the verdict is judged at")
    parser.add_argument("--expected-world-size", type=int, help="fail unless exactly this many ranks join")
    parser.add_argument("--nodes", type=int, help="nodes in the job (default: WORLD_SIZE / LOCAL_WORLD_SIZE)")
    parser.add_argument("--rendezvous-timeout-s", type=float, default=120.0, help="give up joining after this")
    parser.add_argument("--nccl-tests", metavar="BINARY", help="run nccl-tests' all_reduce_perf instead of torch")
    parser.add_argument("--nccl-tests-args", default="-b 1M -e 1G -f 2 -g 1", help="arguments for --nccl-tests")
    parser.add_argument("--nccl-tests-output", metavar="FILE", help="judge a saved all_reduce_perf output (text/-J)")
    parser.add_argument("--inject-corruption", type=int, metavar="RANK", help=argparse.SUPPRESS)


def settings_from_args(args: argparse.Namespace) -> NcclSettings:
    return NcclSettings(
        backend=args.backend,
        nproc=args.nproc,
        min_bytes=parse_size(args.min_bytes, name="--min-bytes"),
        max_bytes=parse_size(args.max_bytes, name="--max-bytes"),
        factor=args.factor,
        iters=args.iters,
        warmup=args.warmup,
        dtype=args.dtype,
        verdict_bytes=parse_size(args.verdict_bytes, name="--verdict-bytes"),
        expected_world_size=args.expected_world_size,
        nodes=args.nodes,
        rendezvous_timeout_s=args.rendezvous_timeout_s,
        corrupt_rank=args.inject_corruption,
        nccl_tests=args.nccl_tests,
        nccl_tests_args=args.nccl_tests_args.split(),
        nccl_tests_output=args.nccl_tests_output,
        instance_type=args.instance_type,
    )


def bus_bandwidth(algbw: float, ranks: int) -> float:
    """nccl-tests' all-reduce bus bandwidth: what each link carries, comparable across rank counts."""
    return algbw * 2 * (ranks - 1) / ranks


def sweep_sizes(settings: NcclSettings) -> list[int]:
    """nccl-tests-style geometric sweep, plus the verdict size; each a whole number of elements."""
    elem = ELEMENT_BYTES[settings.dtype]
    sizes: set[int] = set()
    size = settings.min_bytes
    while size <= settings.max_bytes:
        sizes.add(max(elem, size - size % elem))
        size *= settings.factor
    sizes.add(max(elem, settings.verdict_bytes - settings.verdict_bytes % elem))
    return sorted(sizes)


def under_launcher() -> bool:
    """True when torchrun (or an Indexed Job setting the same variables) started this process."""
    return "WORLD_SIZE" in os.environ and "RANK" in os.environ


def is_reporting_rank() -> bool:
    """Only global rank 0 prints and writes the result; the other ranks just take part."""
    return not under_launcher() or os.environ.get("RANK") == "0"


def environment(settings: NcclSettings) -> ProbeEnvironment:
    return detect_environment(instance_type=settings.instance_type, with_torch=True)


def measure(settings: NcclSettings) -> Outcome:
    """Run the sweep (joining a launched job, or spawning local ranks) and judge it at the verdict size."""
    if settings.nccl_tests or settings.nccl_tests_output:
        return _from_nccl_tests(settings)
    # c10d logs every failed connect attempt with a C++ stack; the probe reports the failure itself.
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "FATAL")
    try:
        import torch
        import torch.distributed
    except ImportError as exc:
        raise ProbeUnavailableError("the nccl probe needs torch with torch.distributed") from exc
    backend = _backend(torch, settings.backend)
    if under_launcher():
        world = int(os.environ["WORLD_SIZE"])
        local_world = int(os.environ.get("LOCAL_WORLD_SIZE", world))
        _check_world(settings, world, backend, local_world, torch)
        report = worker(int(os.environ["RANK"]), world, backend, settings, None)
        nodes = settings.nodes or max(1, world // max(1, local_world))
    else:
        world = settings.nproc or (torch.cuda.device_count() if backend == "nccl" else 2)
        _check_world(settings, world, backend, world, torch)
        report = _spawn_local(world, backend, settings)
        nodes = 1
    return _outcome(report, settings, backend, world, nodes)


def _backend(torch: Any, asked: str) -> str:
    if asked == "nccl" and not torch.cuda.is_available():
        raise ProbeUnavailableError("--backend nccl needs GPUs, but torch sees no CUDA device; use --backend gloo")
    if asked == "auto":
        return "nccl" if torch.cuda.is_available() else "gloo"
    return asked


def _check_world(settings: NcclSettings, world: int, backend: str, local_world: int, torch: Any) -> None:
    if settings.expected_world_size is not None and world != settings.expected_world_size:
        raise ProbeError(
            f"world size mismatch: {world} ranks joined, --expected-world-size is {settings.expected_world_size}; "
            "check the launcher's node count and processes per node (WORLD_SIZE, --nproc_per_node)"
        )
    if world < 2:
        raise ProbeError(f"an all-reduce needs at least 2 ranks, got {world}; pass --nproc 2 or launch more ranks")
    if backend == "nccl" and local_world > torch.cuda.device_count():
        raise ProbeError(
            f"world size mismatch: {local_world} ranks per node but only {torch.cuda.device_count()} GPUs visible; "
            "lower --nproc / --nproc_per_node or check CUDA_VISIBLE_DEVICES and the pod's GPU request"
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spawn_local(world: int, backend: str, settings: NcclSettings) -> dict[str, Any]:
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory(prefix="rlinf-bench-nccl-") as tmp:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ["MASTER_PORT"] = str(_free_port())
        try:
            mp.start_processes(
                _spawned, args=(world, backend, settings, tmp), nprocs=world, join=True, start_method="spawn"
            )
        except mp.ProcessRaisedException as exc:
            raise ProbeError(f"a rank of the local all-reduce crashed: {str(exc).strip().splitlines()[-1]}") from exc
        errors = sorted(Path(tmp).glob("error-*.txt"))
        if errors:
            raise ProbeError(errors[0].read_text())
        report: dict[str, Any] = json.loads((Path(tmp) / "report.json").read_text())
        return report


def _spawned(rank: int, world: int, backend: str, settings: NcclSettings, tmp: str) -> None:
    try:
        worker(rank, world, backend, settings, tmp)
    except ProbeError as exc:
        Path(tmp, f"error-{rank}.txt").write_text(str(exc))


def worker(rank: int, world: int, backend: str, settings: NcclSettings, out_dir: str | None) -> dict[str, Any]:
    """One rank: join, sweep, check sums; rank 0 returns (and writes, when spawned) the per-size table."""
    import torch
    import torch.distributed as dist

    local_rank = int(os.environ.get("LOCAL_RANK", rank)) if under_launcher() else rank
    device = _device(torch, backend, local_rank)
    try:
        dist.init_process_group(
            backend,
            init_method="env://",
            rank=rank,
            world_size=world,
            timeout=_dt.timedelta(seconds=settings.rendezvous_timeout_s),
            **({"device_id": device} if backend == "nccl" else {}),
        )
    except Exception as exc:  # torch raises DistStoreError/DistNetworkError/RuntimeError/ValueError here
        where = f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}"
        raise ProbeError(
            f"rendezvous at {where} failed for rank {rank} of {world} within {settings.rendezvous_timeout_s:g} s "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); check that every rank was "
            "started, MASTER_ADDR/MASTER_PORT are reachable, and raise --rendezvous-timeout-s for slow starts"
        ) from exc
    sizes = sweep_sizes(settings)
    rows = []
    try:
        for k, size in enumerate(sizes, start=1):
            rows.append(_one_size(torch, dist, device, rank, world, size, settings))
            if rank == 0:  # the large sizes take tens of seconds each over gloo on a CPU
                busbw = rows[-1]["busbw_gbps"]
                say(
                    "nccl",
                    f"{format_size(size)} all-reduce over {world} ranks: busbw {busbw:.3g} GB/s ({k}/{len(sizes)})",
                )
    finally:
        dist.destroy_process_group()
    report = {"rows": rows, "world": world}
    if rank == 0 and out_dir is not None:
        Path(out_dir, "report.json").write_text(json.dumps(report))
    return report


def _device(torch: Any, backend: str, local: int) -> Any:
    if backend != "nccl":
        return torch.device("cpu")
    torch.cuda.set_device(local)
    return torch.device("cuda", local)


def _sync(torch: Any, device: Any) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _one_size(
    torch: Any, dist: Any, device: Any, rank: int, world: int, size: int, settings: NcclSettings
) -> dict[str, Any]:
    dtype = getattr(torch, settings.dtype)
    count = size // ELEMENT_BYTES[settings.dtype]
    # Zeros for timing: repeated in-place sums stay finite, and the values do not change the work done.
    buf = torch.zeros(count, dtype=dtype, device=device)
    for _ in range(settings.warmup):
        dist.all_reduce(buf)
    _sync(torch, device)
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(settings.iters):
        dist.all_reduce(buf)
    _sync(torch, device)
    elapsed = torch.tensor([(time.perf_counter() - t0) / settings.iters], dtype=torch.float64, device=device)
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
    seconds = float(elapsed.item())
    wrong = _check_sums(torch, dist, buf, rank, world, settings.corrupt_rank)
    del buf
    algbw = size / seconds / 1e9
    return {
        "bytes": size,
        "count": count,
        "dtype": settings.dtype,
        "time_us": seconds * 1e6,
        "algbw_gbps": algbw,
        "busbw_gbps": bus_bandwidth(algbw, world),
        "wrong": wrong,
    }


def _check_sums(torch: Any, dist: Any, buf: Any, rank: int, world: int, corrupt_rank: int | None) -> int:
    """All-reduce a known pattern once and count wrong elements over all ranks (exact small integers)."""
    buf.fill_(rank + 1)
    buf[::7] += rank
    if corrupt_rank == rank:
        buf[buf.numel() // 2] += 1  # a faulty GPU or link contributing one wrong value
    dist.all_reduce(buf)
    expected = torch.full_like(buf, world * (world + 1) // 2)
    expected[::7] += world * (world - 1) // 2
    wrong = torch.tensor([int((buf != expected).sum().item())], dtype=torch.int64, device=buf.device)
    dist.all_reduce(wrong)
    return int(wrong.item())


def _outcome(report: dict[str, Any], settings: NcclSettings, backend: str, world: int, nodes: int) -> Outcome:
    rows: list[dict[str, Any]] = report["rows"]
    at = min(rows, key=lambda r: abs(r["bytes"] - settings.verdict_bytes))
    wrong = sum(r["wrong"] for r in rows)
    values = {
        "busbw_gbps": m(at["busbw_gbps"], "GB/s"),
        "algbw_gbps": m(at["algbw_gbps"], "GB/s"),
        "time_us": m(at["time_us"], "us"),
        "avg_busbw_gbps": m(sum(r["busbw_gbps"] for r in rows) / len(rows), "GB/s"),
        "peak_busbw_gbps": m(max(r["busbw_gbps"] for r in rows), "GB/s"),
        "wrong_elements": m(wrong, "count"),
        "ranks": m(world, "count"),
    }
    env = detect_environment(instance_type=settings.instance_type, with_torch=True)
    target = resolve_target(
        "nccl",
        "busbw_gbps",
        default_nccl_target(env.instance_type, env.gpu_model, nodes),
        instance_type=env.instance_type,
        nodes=nodes,
    )
    details = {
        "backend": backend,
        "nodes": nodes,
        "verdict_bytes": at["bytes"],
        "verdict_size": format_size(at["bytes"]),
        "formula": "algbw = bytes / time; busbw = algbw * 2(n-1)/n (nccl-tests); time = slowest rank's mean",
        "avg_busbw_note": "mean over all sizes, as nccl-tests prints it; not used for the verdict",
        "table": rows,
    }
    outcome = Outcome(values=values, target=target, details=details, environment=env)
    if wrong:
        bad = [format_size(r["bytes"]) for r in rows if r["wrong"]]
        outcome.forced_fail = f"all-reduce returned {wrong} wrong elements (sizes {', '.join(bad)}): data corruption"
    if backend == "gloo":
        outcome.note = "gloo on CPUs: checks the probe itself, says nothing about NVLink/EFA"
    return outcome


def _from_nccl_tests(settings: NcclSettings) -> Outcome:
    from infra_probes import nccl_tests

    if settings.nccl_tests_output:
        path = Path(settings.nccl_tests_output)
        if not path.is_file():
            raise ProbeError(f"--nccl-tests-output {path} does not exist; pass the file all_reduce_perf wrote")
        text = path.read_text()
        rows = nccl_tests.parse_json(text) if text.lstrip().startswith("{") else nccl_tests.parse_text(text)
        meta: dict[str, Any] = {"source_file": str(path)}
    else:
        rows, meta = nccl_tests.run_all_reduce_perf(str(settings.nccl_tests), settings.nccl_tests_args)
    world = settings.expected_world_size or 0
    outcome = _outcome({"rows": rows}, settings, "nccl-tests", world, settings.nodes or 1)
    outcome.details["nccl_tests"] = meta
    if not world:
        outcome.values.pop("ranks")
    return outcome
