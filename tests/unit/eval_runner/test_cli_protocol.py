"""The evaluate command's protocol flags end up in the EvalRun, and bad values are refused by name."""

from __future__ import annotations

import pytest

from eval_runner.cli import build_run
from rlinf_bench.contracts import EvalRun
from rlinf_cli.main import build_parser


def _run(*argv: str) -> EvalRun:
    return build_run(build_parser().parse_args(["evaluate", *argv]))


def test_without_protocol_flags_the_run_follows_rlinfs_profile_and_fails_on_simulator_errors() -> None:
    # The default baseline (RLinf's paper numbers) was measured under RLinf's protocol: the default run is too.
    run = _run("--suite", "libero_goal")
    assert (run.protocol, run.settle_steps, run.settle_gripper, run.resolution) == ("rlinf", None, None, None)
    assert run.on_episode_error == "fail-run"


def test_protocol_and_each_override_reach_the_eval_run() -> None:
    run = _run(
        "--protocol",
        "rlinf",
        "--max-steps",
        "400",
        "--settle-steps",
        "12",
        "--settle-gripper",
        "-1",
        "--resolution",
        "224",
        "--on-episode-error",
        "fail-episode",
    )
    assert (run.protocol, run.max_steps, run.settle_steps, run.settle_gripper, run.resolution) == (
        "rlinf",
        400,
        12,
        -1.0,
        224,
    )
    assert run.on_episode_error == "fail-episode"


def test_flags_override_a_requests_protocol() -> None:
    request = '{"request_id": "r", "checkpoint": {"uri": "", "experiment": "x", "global_step": 0}, "suite": "libero_10", "run_index": 0, "seed": 0, "protocol": "rlinf"}'
    assert _run("--request", request).protocol == "rlinf"
    assert _run("--request", request, "--protocol", "oft").protocol == "oft"


@pytest.mark.parametrize(("flag", "value"), [("--protocol", "lerobot"), ("--on-episode-error", "ignore")])
def test_unknown_choices_are_refused_listing_the_valid_ones(
    flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["evaluate", flag, value])
    assert "invalid choice" in capsys.readouterr().err
