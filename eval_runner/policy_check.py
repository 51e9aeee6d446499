"""``python -m eval_runner.policy_check --policy SPEC CHECKPOINT...``: can this policy evaluate these checkpoints?

What ``pipeline``, ``watch``, ``demo`` and ``backfill`` run before they build the local stack (they reach the
evaluator only through command lines, as the Jobs do), so a policy that cannot read a checkpoint fails in
seconds, naming the user's folder, instead of after the stack, the probes and the Job's start-up.

Checked: the spec's grammar and scheme (with "did you mean"), and, for the ``builtin:`` policies, which run in
this process, the policy itself built on each checkpoint exactly as the eval Job builds it (a demo state dict is
loaded, the expert's settings read). Other schemes load their model in a server or another venv: their
checkpoint is checked by the Job's own preflight. Prints one JSON line (``checkpoint``, ``error``, ``reason``) for
the first checkpoint that cannot be evaluated and exits 2; 0 when every one can.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from eval_runner.envs.kinds import KIND_MODULES, env_kind
from eval_runner.policies.factory import DEFAULT_ENV_KIND, load_policy, resolve_scheme
from rlinf_bench.errors import RlinfBenchError

__all__ = ["BUILT_HERE", "check_policy", "main"]

#: Schemes whose policies run in this process and read the checkpoint themselves: built here to check them.
BUILT_HERE = frozenset({"builtin"})


def check_policy(spec: str, checkpoint: Path, *, env_kind: str = DEFAULT_ENV_KIND) -> None:
    """Raise the error the eval Job would raise when ``spec`` cannot evaluate ``checkpoint`` (PolicyError for a
    bad spec, CheckpointError for a checkpoint the policy cannot read)."""
    if resolve_scheme(spec).scheme not in BUILT_HERE:
        return
    load_policy(spec, checkpoint, env_kind=env_kind).close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval_runner.policy_check", description=__doc__.split("\n")[0])
    parser.add_argument("checkpoints", nargs="*", type=Path, metavar="CHECKPOINT", help="global_step_<N> folders")
    parser.add_argument("--policy", required=True, metavar="SPEC", help="the policy spec to check")
    parser.add_argument(
        "--env-kind", default=DEFAULT_ENV_KIND, choices=sorted(KIND_MODULES), help="a suite's simulator (catalogue)"
    )
    args = parser.parse_args(argv)
    checkpoint: Path | None = None
    try:
        resolve_scheme(args.policy)  # the spec alone, also when no checkpoint exists yet (watch)
        for checkpoint in args.checkpoints:
            check_policy(args.policy, checkpoint, env_kind=env_kind(args.env_kind).name)
    except RlinfBenchError as exc:
        # The first refusal is the answer: the other checkpoints would load their weights for nothing.
        print(json.dumps({"checkpoint": str(checkpoint or ""), "error": type(exc).__name__, "reason": str(exc)}))
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
