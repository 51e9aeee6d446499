"""The small eval matrix the embedded default runs when no ``--config`` is given (and ``demo`` always runs).

LIBERO-Spatial, 2 tasks x 3 trials x 3 runs, a short horizon, 2 workers; probes storage, checkpoint_io,
gpu (not_available on a CPU, with the reason) and nccl over gloo with 2 ranks. The full matrix of the
brief (4 suites x 3 runs x 50 trials) takes hours on a CPU: give it with ``--config``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

__all__ = ["DEMO_POLICY", "SMALL_BUDGET_MAX_STEPS", "small_matrix", "small_matrix_yaml"]

# The default policy of `pipeline`/`watch` without --config: it reads its weights from the checkpoint and
# the mean colour of a 64 px agent-view image. (`demo` gives its own: the scripted expert.)
DEMO_POLICY = "builtin:demo?cameras=agentview&resolution=64"
#: The small budget's episode horizon (policy steps): short, so the budget runs in minutes on a CPU.
SMALL_BUDGET_MAX_STEPS = 20


def small_matrix(
    scratch: Path,
    *,
    max_steps: int | None = SMALL_BUDGET_MAX_STEPS,
    tasks: tuple[int, ...] = (0, 1),
    trials: int = 3,
    runs: int = 3,
    workers: int = 2,
    probes: tuple[str, ...] = ("storage", "checkpoint_io", "gpu", "nccl"),
    policy: str = DEMO_POLICY,
    videos: int | None = None,
    robustness: str | None = None,
) -> dict[str, Any]:
    """The intake config (an IntakeConfig document) of the small budget; probes write under ``scratch``
    (created here: the storage and checkpoint_io probes measure an existing folder). ``videos``: None keeps
    the matrix's default (a few per task; the demo policy renders its camera anyway, so they cost the
    encoding only); the smallest test budgets pass 0. ``max_steps`` None keeps the protocol's own horizon
    (the episode settings a published baseline was measured under)."""
    scratch = scratch.resolve()
    for name in ("storage", "checkpoint_io"):
        (scratch / name).mkdir(parents=True, exist_ok=True)
    probe_specs: list[dict[str, Any]] = [
        {
            "name": "storage",
            "gpus_per_node": 0,
            "args": ["--path", str(scratch / "storage"), "--size", "8M", "--block-size", "1M"],
        },
        {
            "name": "checkpoint_io",
            "gpus_per_node": 0,
            "args": ["--path", str(scratch / "checkpoint_io"), "--params", "4e6", "--tensor-params", "1e6"],
        },
        {"name": "gpu", "gpus_per_node": 0},
        {
            "name": "nccl",
            "gpus_per_node": 0,
            "args": ["--backend", "gloo", "--nproc", "2", "--max-bytes", "4M", "--verdict-bytes", "4M"],
        },
    ]
    return (
        {
            "suites": [
                {"name": "libero_spatial", "tasks": list(tasks)}
                | ({} if max_steps is None else {"max_steps": max_steps})
            ],
            "runs": runs,
            "trials_per_task": trials,
            "policy": policy,
            "workers": workers,
            "resources": {"gpu": 0, "cpu": "2", "memory": "4Gi"},
            "baselines": ["libero/openvla-oft-rlinf", "previous"],
            "probes": [p for p in probe_specs if p["name"] in probes],
            "workflow": {"heartbeat_s": 600},
            "quiet_period_s": 0,
        }
        | ({} if videos is None else {"videos": videos})
        | ({} if robustness is None else {"robustness": robustness})
    )


def small_matrix_yaml(scratch: Path, **kw: Any) -> str:
    """:func:`small_matrix` as the YAML text the intake reads."""
    return str(yaml.safe_dump(small_matrix(scratch, **kw), sort_keys=False))
