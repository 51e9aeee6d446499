"""``rlinf-bench serve-policy``: serve any policy spec over the websocket policy protocol.

Typical use: a GPU pod runs ``rlinf-bench serve-policy --policy python:my_pkg:make --checkpoint s3://…``
and the CPU evaluation workers use ``--policy server:ws://<pod>:8000``, so the model is loaded once
and batches from all workers share it.
"""

from __future__ import annotations

import argparse
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
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load the policy, then serve until interrupted."""
    from eval_runner.checkpoint_fetch import materialize_checkpoint
    from eval_runner.policies.factory import load_policy
    from eval_runner.policies.server import PolicyServer

    checkpoint = materialize_checkpoint(args.checkpoint, args.cache_dir) if args.checkpoint else None
    policy = load_policy(args.policy, checkpoint)
    server = PolicyServer(policy, args.host, args.port, name=args.policy)
    _stop_on_sigterm(server)
    # Printed (not only logged) so scripts and tests can read the bound port when --port 0.
    print(f"serving {args.policy} at {server.url}", flush=True)
    try:
        server.serve_forever()
    finally:
        policy.close()
    print("policy server stopped", flush=True)
    return 0


def _stop_on_sigterm(server: Any) -> None:
    """Kubernetes stops pods with SIGTERM: close connections cleanly and exit 0 instead of dying mid-reply."""
    import signal
    import threading

    def stop(signum: int, frame: Any) -> None:
        # shutdown() waits for serve_forever() to return, which runs in this (main) thread: call it from another.
        threading.Thread(target=server.shutdown, name="policy-server-stop", daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
