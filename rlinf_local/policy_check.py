"""Before any stack is built: can the eval matrix's policy evaluate the checkpoints it is pointed at?

The evaluator answers through its own command line (``python -m eval_runner.policy_check``, what the Jobs
would run), in seconds; a refusal names the user's folder, the reason, the policies the checkpoint's own files
name and the user's command with the ``--policy`` that evaluates it.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from rlinf_bench.checkpoints.named_policies import policy_advice
from rlinf_bench.errors import ConfigError, PolicyError
from rlinf_bench.suites import get_suite
from rlinf_local.stack import REPO

__all__ = ["check_matrix_policy", "command_with_policy", "policy_of", "rerun_command"]


def policy_of(config_text: str) -> tuple[str, list[str]]:
    """The policy spec an intake config's matrix evaluates, and the env kinds of its suites."""
    from rlinf_bench.intake.config import parse_config_text

    matrix = parse_config_text(config_text, source="the eval matrix")
    kinds = sorted({get_suite(s.name).benchmark.key for s in matrix.suites})  # a benchmark's key is its env kind's name
    return matrix.policy, kinds


def command_with_policy(argv: Sequence[str]) -> str:
    """The user's command line (``rlinf-bench`` and ``argv``) with any ``--policy`` dropped and ``{policy}``
    where the right one goes, for :func:`rlinf_bench.checkpoints.named_policies.policy_advice`."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == "--policy":
            skip = True
            continue
        if not arg.startswith("--policy="):
            kept.append(arg)
    return shlex.join(["rlinf-bench", *kept]).replace("{", "{{").replace("}", "}}") + " {policy}"


def rerun_command(argv: Sequence[str]) -> str:
    """The user's command, to run again once a failure's cause is fixed (finished runs are kept)."""
    return shlex.join(["rlinf-bench", *argv]) if argv else ""


def check_matrix_policy(config_text: str, checkpoints: Sequence[Path], *, argv: Sequence[str] = ()) -> None:
    """Raise PolicyError naming the checkpoint when the matrix's policy cannot evaluate one of ``checkpoints``
    (none given: the spec alone is checked); ``argv``: the user's command, rewritten into the one to run."""
    policy, kinds = policy_of(config_text)
    for kind in kinds:
        cmd = [sys.executable, "-m", "eval_runner.policy_check", "--policy", policy, "--env-kind", kind]
        proc = subprocess.run([*cmd, *map(str, checkpoints)], capture_output=True, text=True, cwd=REPO, check=False)
        if proc.returncode == 0:
            continue
        refusals = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        if not refusals:
            raise ConfigError(f"checking --policy {policy} failed: {proc.stderr.strip()[-2000:]}")
        first = refusals[0]
        if not first["checkpoint"]:
            raise PolicyError(f"--policy {policy}: {first['reason']}")
        path = Path(first["checkpoint"])
        raise PolicyError(
            f"the policy {policy} cannot evaluate {path}: {first['reason']}. For {path.name}, {policy_advice(path, command_with_policy(argv) if argv else '')}"
        )
