"""Find why the storage probe and fio/dd disagree on a file system: swap writers and readers on one file.

Each round writes a file with one tool and reads it back with every tool, so a difference that
follows the reader is the reader's, and one that follows the writer is the file's (its layout) or
the device's state after that writer. Output: a JSON list of rows, printed and saved.

    python bench/storage_diag.py --dir /var/tmp/probe --size-mib 4096 --out bench/results/storage_diag.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from infra_probes.api import read_timed, write_timed


def fio(rw: str, path: Path, size_mib: int, block_mib: int, extra: list[str]) -> float:
    args = [
        "fio",
        f"--name=diag{rw}",
        f"--filename={path}",
        f"--rw={rw}",
        f"--bs={block_mib}M",
        f"--size={size_mib}M",
        "--direct=1",
        "--ioengine=sync",
        "--end_fsync=1",
        "--output-format=json",
        *extra,
    ]
    proc = subprocess.run(args, capture_output=True, text=True, check=True)
    return float(json.loads(proc.stdout)["jobs"][0][rw]["bw_bytes"]) / 1e6


def scattered_write(path: Path, size: int, block: int) -> float:
    """The probe's write loop, but with buffer pages faulted in random order (physically scattered)."""
    import mmap
    import os
    import random

    buf = mmap.mmap(-1, block)
    pages = list(range(block // mmap.PAGESIZE))
    random.Random(0).shuffle(pages)
    for page in pages:
        buf[page * mmap.PAGESIZE] = 1
    buf[:] = os.urandom(block)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o600)
    t0 = time.perf_counter()
    for _ in range(size // block):
        os.write(fd, buf)
    os.fsync(fd)
    seconds = time.perf_counter() - t0
    os.close(fd)
    buf.close()
    return size / seconds / 1e6


def dd_read(path: Path, block_mib: int) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        ["dd", f"if={path}", "of=/dev/null", f"bs={block_mib}M", "iflag=direct"], capture_output=True, check=True
    )
    return path.stat().st_size / (time.perf_counter() - t0) / 1e6


def readers(path: Path, size: int, block: int, size_mib: int, block_mib: int) -> dict[str, float]:
    return {
        "probe_read": size / read_timed(path, size, block)["seconds"] / 1e6,
        **({"fio_read": fio("read", path, size_mib, block_mib, [])} if shutil.which("fio") else {}),
        "dd_read": dd_read(path, block_mib),
        "probe_read_again": size / read_timed(path, size, block)["seconds"] / 1e6,
        "probe_read_hugepages": size / read_timed(path, size, block, hugepages=True)["seconds"] / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", default="/var/tmp", help="directory on the file system to test")
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--block-mib", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--writers", default="probe,probe_hugepages,fio,fio_no_fallocate")
    parser.add_argument("--writes-only", action="store_true", help="skip the readers")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "probes_storage_diag_cpu.json"))
    args = parser.parse_args()
    size, block = args.size_mib << 20, args.block_mib << 20
    writers = args.writers.split(",")
    if shutil.which("fio") is None:  # fio is optional: compare probe and dd only
        writers = [w for w in writers if not w.startswith("fio")]
    path = Path(args.dir) / "diag.bin"
    rows: list[dict[str, Any]] = []
    for _ in range(args.rounds):
        for writer in writers:
            path.unlink(missing_ok=True)
            if writer == "probe_scattered":
                write = scattered_write(path, size, block)
            elif writer.startswith("probe"):
                write = size / write_timed(path, size, block, hugepages=writer.endswith("hugepages"))["seconds"] / 1e6
            else:
                # fio_hugemem: fio's buffer in huge pages (needs vm.nr_hugepages), physically contiguous.
                extra = {"fio_no_fallocate": ["--fallocate=none"], "fio_hugemem": ["--iomem=shmhuge"]}.get(writer, [])
                try:
                    write = fio("write", path, args.size_mib, args.block_mib, extra)
                except subprocess.CalledProcessError as exc:
                    print(json.dumps({"writer": writer, "error": (exc.stdout or "")[-300:]}), flush=True)
                    continue
            row = {"writer": writer, "write_mb_s": write}
            if not args.writes_only:
                row.update(readers(path, size, block, args.size_mib, args.block_mib))
            print(json.dumps(row), flush=True)
            rows.append(row)
    path.unlink(missing_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
