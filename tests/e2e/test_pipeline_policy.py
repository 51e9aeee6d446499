"""``pipeline --policy``: the demo's own checkpoints through the pipeline, as the README's "same flow for your
own checkpoints" promises.

GIVEN a checkpoint that carries the scripted expert's settings (as ``make demo`` writes them), WHEN a user runs
the pipeline without ``--policy``, THEN it is refused in seconds, before any stack is built, naming their folder,
the policy its files name and the command that evaluates it; WHEN they run that command, THEN it ends with a
verdict.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from eval_runner.demo_checkpoint import write_demo_checkpoint
from eval_runner.expert_checkpoint import ExpertSettings
from tests.e2e.conftest import rlinf_bench

EXPERT = "builtin:expert?settings=checkpoint"


@pytest.fixture(scope="module")
def expert_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """<root>/demo/checkpoints/global_step_200, as ``make demo`` writes it (the expert at noise 0)."""
    root = tmp_path_factory.mktemp("demo-out") / "runs"
    write_demo_checkpoint(root, "demo", 200, expert=ExpertSettings(noise=0.0))
    return root / "demo" / "checkpoints" / "global_step_200"


def test_given_the_demos_checkpoint_without_policy_then_the_pipeline_names_the_policy_before_building_anything(
    expert_checkpoint: Path, tmp_path: Path
) -> None:
    out = tmp_path / "X"
    cli = rlinf_bench("pipeline", str(expert_checkpoint), "--out", str(out))

    assert cli.returncode == 2, cli.stderr[-3000:]
    assert str(expert_checkpoint) in cli.stderr and "/cache" not in cli.stderr  # the user's folder, not a cache
    assert "not a demo policy state dict" in cli.stderr and f"--policy '{EXPERT}'" in cli.stderr
    run = cli.stderr.split("run: ", 1)[1].strip()
    assert shlex.split(run) == [
        "rlinf-bench",
        "pipeline",
        str(expert_checkpoint),
        "--out",
        str(out),
        "--policy",
        EXPERT,
    ]
    assert "moto" not in cli.stdout + cli.stderr and not (out / "state.json").exists()  # no stack was built


def test_given_a_policy_with_a_typo_then_pipeline_refuses_it_with_did_you_mean(
    expert_checkpoint: Path, tmp_path: Path
) -> None:
    cli = rlinf_bench("pipeline", str(expert_checkpoint), "--policy", "bultin:expert", "--out", str(tmp_path / "X"))

    assert cli.returncode == 2 and "Did you mean 'builtin'?" in cli.stderr, cli.stderr[-3000:]


@pytest.mark.sim
@pytest.mark.slow
def test_given_the_policy_the_checkpoint_names_then_the_pipeline_ends_with_a_verdict(
    expert_checkpoint: Path, tiny_config: Path, tmp_path: Path
) -> None:
    cli = rlinf_bench(
        "pipeline", str(expert_checkpoint), "--policy", EXPERT, "--config", str(tiny_config),
        "--out", str(tmp_path / "X"), "--json",
    )  # fmt: skip

    assert cli.returncode == 0, cli.stderr[-3000:]
    (execution,) = cli.json()["executions"]
    assert execution["status"] == "SUCCEEDED" and execution["checkpoint"]["global_step"] == 200
    assert execution["verdict"], execution
