"""``rlinf-bench serve-policy``: serve any policy spec over the websocket policy protocol.

Typical use: a GPU pod runs ``rlinf-bench serve-policy --policy python:my_pkg:make --checkpoint s3://…``
and the CPU evaluation workers use ``--policy server:ws://<pod>:8000``, so the model is loaded once
and batches from all workers share it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

DEFAULT_CACHE = Path.home() / ".cache" / "rlinf-bench" / "checkpoints"


def register(sub: Any) -> None:
    """Add the ``serve-policy`` subcommand."""
    parser = sub.add_parser(
        "serve-policy",
        help="serve a policy over a websocket (protocol: docs/policies.md)",
        description=__doc__,
        epilog="example: rlinf-bench serve-policy --policy builtin:demo --host 0.0.0.0 --port 8000",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--policy",
        required=True,
        help="policy spec, e.g. rlinf:CONFIG?device=cuda:0, builtin:demo or python:MODULE:FACTORY",
    )
    parser.add_argument("--checkpoint", default=None, help="checkpoint root: local path or s3://bucket/prefix")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (0.0.0.0 inside a pod)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (0 picks a free one)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help="where s3:// checkpoints are downloaded")
    parser.add_argument(
        "--max-batch", type=int, default=None, help="rows per policy call when requests are merged (default: no cap)"
    )
    parser.add_argument(
        "--batch-window-ms",
        type=float,
        default=0.0,
        help="after a request arrives, wait this long for more to merge into the call (default 0: only those queued)",
    )
    parser.add_argument(
        "--cpus",
        default=None,
        help="CPU cores reserved for the server, e.g. 0 or 0-1 (it runs only there; leave the rest to the "
        "simulator workers); recorded in the metadata every client logs",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load the policy, then serve until interrupted."""
    from eval_runner.checkpoint_fetch import materialize_checkpoint
    from eval_runner.policies.factory import load_policy
    from eval_runner.policies.request_batching import ServerBatching
    from eval_runner.policies.server import PolicyServer

    if args.max_batch is not None and args.max_batch < 1:
        raise SystemExit(f"--max-batch {args.max_batch}: give 1 or more rows, or leave it out for no cap")
    if args.batch_window_ms < 0:
        raise SystemExit(f"--batch-window-ms {args.batch_window_ms}: give 0 or more milliseconds")
    cpus = reserved_cpus(args.cpus)  # refused now, before minutes of loading, when a core does not exist
    checkpoint = materialize_checkpoint(args.checkpoint, args.cache_dir) if args.checkpoint else None
    if args.cpus is not None:
        # Before the load: torch.compile guards on the thread count, so changing it afterwards would
        # compile the model again at its first request.
        limit_torch_threads(len(cpus))
    # Loaded on every core: a model compiled at load time compiles in parallel (in worker processes).
    # Nothing else runs yet; the workers start once "serving" is printed.
    policy = load_policy(args.policy, checkpoint)
    provenance = {"cpus": pin_process(cpus) if args.cpus is not None else cpus}
    batching = ServerBatching(max_batch=args.max_batch, window_ms=args.batch_window_ms)
    server = PolicyServer(policy, args.host, args.port, name=args.policy, batching=batching, provenance=provenance)
    _stop_on_sigterm(server)
    # Printed (not only logged) so scripts and tests can read the bound port when --port 0.
    print(f"serving {args.policy} at {server.url}", flush=True)
    try:
        server.serve_forever()
    finally:
        policy.close()
    # One line an operator (or bench/eval_gpu.py) can read: how far requests were merged into calls,
    # and how busy the model thread was.
    print("policy server stopped: " + json.dumps(server.call_summary()), flush=True)
    return 0


def _stop_on_sigterm(server: Any) -> None:
    """Kubernetes stops pods with SIGTERM: close connections cleanly and exit 0 instead of dying mid-reply."""
    import signal
    import threading

    def stop(signum: int, frame: Any) -> None:
        # shutdown() waits for serve_forever() to return, which runs in this (main) thread: call it from another.
        threading.Thread(target=server.shutdown, name="policy-server-stop", daemon=True).start()

    signal.signal(signal.SIGTERM, stop)


def parse_cpus(text: str) -> list[int]:
    """``"0-1,4"`` -> ``[0, 1, 4]``; a clear error for anything else."""
    cpus: set[int] = set()
    try:
        for part in text.split(","):
            lo, _, hi = part.strip().partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
    except ValueError as exc:
        raise SystemExit(f"--cpus {text!r}: give core numbers and ranges, e.g. 0 or 0-1 or 0,2") from exc
    if not cpus:
        raise SystemExit(f"--cpus {text!r}: give at least one core, e.g. 0")
    return sorted(cpus)


def reserved_cpus(text: str | None) -> list[int]:
    """The cores ``--cpus`` names (all this process may use when ``None``); exits naming any that are missing."""
    import os

    available = sorted(os.sched_getaffinity(0))
    if text is None:
        return available
    cpus = parse_cpus(text)
    missing = sorted(set(cpus) - set(available))
    if missing:
        raise SystemExit(f"--cpus {text!r}: cores {missing} are not available here (available: {available})")
    return cpus


def pin_process(cpus: list[int]) -> list[int]:
    """Pin every thread of this process, and those it starts later, to ``cpus``; returns them.

    Linux pins one thread per call, so the threads the policy's libraries already started (CUDA's, a
    compiler pool's) are pinned one by one from ``/proc/self/task``; new threads inherit the caller's mask.
    """
    import os

    threads = [int(t) for t in os.listdir("/proc/self/task")] if os.path.isdir("/proc/self/task") else []
    for tid in threads:
        try:
            os.sched_setaffinity(tid, cpus)
        except (ProcessLookupError, PermissionError):  # the thread ended meanwhile, or is not ours to move
            continue
    os.sched_setaffinity(0, cpus)
    return cpus


def limit_torch_threads(count: int) -> None:
    """PyTorch's intra-op threads, one per reserved core: more would only contend (no-op without torch)."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(count)
