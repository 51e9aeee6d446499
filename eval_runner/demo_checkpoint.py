"""Write a small but real RLinf FSDP checkpoint holding the demo policy's parameters.

Layout (RLinf v0.2+, REFERENCE.md section 3) under ``<root>/<experiment>/checkpoints/global_step_<N>/``::

    actor/dcp_checkpoint/__0_0.distcp      torch.distributed.checkpoint shard of rank 0 (model + optimizer)
    actor/dcp_checkpoint/.metadata         DCP metadata
    actor/model_state_dict/full_weights.pt torch.save of the full model state dict, written LAST

The DCP part is written with ``torch.distributed.checkpoint.save`` in single-process mode (no
process group is needed on a CPU), so anything that reads RLinf checkpoints sees real DCP files.
``full_weights.pt`` is written last and atomically (temp file + rename) because its arrival is what
the completeness check waits for.

With ``--expert-noise STD`` it holds the settings of the scripted expert instead (see
:mod:`eval_runner.expert_checkpoint`): what ``make demo`` evaluates, so its two steps differ for real.

Run ``python -m eval_runner.demo_checkpoint DIR [--experiment E] [--step N] [--seed S] [--expert-noise STD]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from eval_runner.expert_checkpoint import SETTINGS_FILE, ExpertSettings, settings_json
from rlinf_bench.checkpoints.layouts import detect_layout, find_weights
from rlinf_bench.contracts.checkpoint import CheckpointLayout, CheckpointRef
from rlinf_bench.errors import CheckpointError


def checkpoint_root(root: Path, experiment: str, global_step: int) -> Path:
    """``<root>/<experiment>/checkpoints/global_step_<N>``: where RLinf puts step N of a run."""
    return root / experiment / "checkpoints" / f"global_step_{global_step}"


def write_demo_checkpoint(
    root: Path,
    experiment: str = "demo",
    global_step: int = 100,
    seed: int = 0,
    *,
    expert: ExpertSettings | None = None,
) -> CheckpointRef:
    """Write a demo checkpoint in RLinf's FSDP layout and return its reference.

    Without ``expert``: the ``builtin:demo`` policy's random parameters, picked by ``seed`` (two seeds give
    two different policies). With ``expert``: no learned parameters at all but the settings of the
    scripted expert (``builtin:expert?settings=checkpoint`` reads them), written before the weights file;
    the weights file then holds the same settings as tensors so the two demo steps differ in content.
    """
    import torch
    import torch.distributed.checkpoint as dcp

    from eval_runner.policies.demo_mlp import init_demo_state_dict

    if global_step < 0:
        raise CheckpointError(f"global_step={global_step} must be >= 0")
    ckpt = checkpoint_root(Path(root), experiment, global_step)
    actor = ckpt / "actor"
    dcp_dir = actor / "dcp_checkpoint"
    weights = actor / "model_state_dict" / "full_weights.pt"
    dcp_dir.mkdir(parents=True, exist_ok=True)
    weights.parent.mkdir(parents=True, exist_ok=True)

    if expert is None:
        model = init_demo_state_dict(seed)
    else:
        model = {name: torch.tensor(float(getattr(expert, name))) for name in ("noise", "hesitate", "seed")}
        (actor / SETTINGS_FILE.removeprefix("actor/")).write_text(settings_json(expert))
    # What an FSDP run's DCP shard holds besides the model: Adam moments and the step counter.
    optimizer = {
        "state": {
            name: {"exp_avg": torch.zeros_like(t), "exp_avg_sq": torch.zeros_like(t)} for name, t in model.items()
        },
        "param_groups": [{"lr": 1e-5, "step": global_step}],
    }
    with warnings.catch_warnings():
        # Single-process DCP is what we want here; torch warns that no process group exists.
        warnings.filterwarnings("ignore", message=".*torch.distributed is disabled.*")
        dcp.save({"model": model, "optimizer": optimizer}, checkpoint_id=str(dcp_dir))

    tmp = weights.with_name(f".{weights.name}.tmp")
    torch.save(model, tmp)
    os.replace(tmp, weights)

    layout = detect_layout(ckpt)
    if layout is not CheckpointLayout.FSDP_DCP or find_weights(ckpt, layout) != weights:
        raise CheckpointError(
            f"{ckpt}: wrote a demo checkpoint but it is not detected as fsdp_dcp (got {layout.value})"
        )
    return CheckpointRef(uri=str(ckpt.resolve()), experiment=experiment, global_step=global_step, layout=layout)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval_runner.demo_checkpoint", description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path, help="log directory; the checkpoint goes to ROOT/EXPERIMENT/checkpoints/…")
    parser.add_argument("--experiment", default="demo")
    parser.add_argument("--step", type=int, default=100, help="global step (directory global_step_<N>)")
    parser.add_argument("--seed", type=int, default=0, help="picks the demo parameters (or the expert's noise)")
    parser.add_argument(
        "--expert-noise",
        type=float,
        default=None,
        metavar="STD",
        help="write the settings of the scripted expert (builtin:expert?settings=checkpoint) at this action "
        "noise instead of random demo weights: not a learned policy",
    )
    args = parser.parse_args(argv)
    try:
        expert = None if args.expert_noise is None else ExpertSettings(noise=args.expert_noise, seed=args.seed)
    except ValidationError:
        parser.error(f"--expert-noise {args.expert_noise}: must be between 0 and 5 (action units)")
    ref = write_demo_checkpoint(args.root, args.experiment, args.step, args.seed, expert=expert)
    print(ref.to_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
