"""Protocol profiles: the reference settings they encode, and what makes two protocols incomparable."""

from __future__ import annotations

import pytest

from rlinf_bench.errors import ConfigError
from rlinf_bench.protocols import (
    GREEDY,
    PROFILES,
    BaselineProtocol,
    RunProtocol,
    decoding_difference,
    episode_differences,
    get_profile,
    protocol_differences,
    sampling,
)
from rlinf_bench.suites import SUITES


def test_oft_profile_is_openvla_ofts_loop_and_matches_the_suites_defaults() -> None:
    oft = get_profile("oft")
    assert set(oft.max_steps) == {"libero_spatial", "libero_object", "libero_goal", "libero_10", "libero_90"}
    assert oft.max_steps == {name: SUITES[name].max_steps for name in oft.max_steps}
    assert oft.max_steps["libero_spatial"] == 220
    assert (oft.settle_steps, oft.settle_gripper, oft.resolution, oft.decoding) == (10, -1.0, 256, GREEDY)


def test_rlinf_profile_is_rlinfs_v03_openvla_oft_eval_configs() -> None:
    rlinf = get_profile("rlinf")
    assert rlinf.max_steps["libero_goal"] == 512 and rlinf.max_steps["libero_10"] == 520
    assert (rlinf.settle_steps, rlinf.settle_gripper, rlinf.decoding) == (15, 0.0, "sampling (temperature 1.6)")
    assert sampling(1.6) == rlinf.decoding


def test_unknown_profile_or_suite_names_the_valid_choices() -> None:
    with pytest.raises(ConfigError, match=r"unknown protocol 'rlnf'; valid: oft, rlinf\. Did you mean 'rlinf'\?"):
        get_profile("rlnf")
    with pytest.raises(ConfigError, match="pass --max-steps"):
        PROFILES["oft"].max_steps_for("robotwin_short")


def test_protocol_differences_name_every_setting_that_differs() -> None:
    baseline = BaselineProtocol(
        name="rlinf",
        max_steps={"libero_goal": 512},
        settle_steps=15,
        settle_gripper=0.0,
        decoding=sampling(1.6),
        source="test",
    )
    oft_run = RunProtocol(name="oft", max_steps=300, settle_steps=10)
    assert protocol_differences(oft_run, baseline, "libero_goal") == [
        "max steps 300 vs 512",
        "settle steps 10 vs 15",
        "settle gripper -1 vs 0",
        "decoding greedy vs sampling (temperature 1.6)",
    ]
    same = RunProtocol(name="rlinf", max_steps=512, settle_steps=15, settle_gripper=0.0, decoding=sampling(1.6))
    assert protocol_differences(same, baseline, "libero_goal") == []
    # A suite the baseline publishes no steps for is not held against the run.
    assert protocol_differences(same.model_copy(update={"max_steps": 9}), baseline, "libero_10") == []


def test_decoding_is_not_an_episode_difference_but_a_named_caveat() -> None:
    baseline = BaselineProtocol(
        name="rlinf",
        max_steps={"libero_goal": 512},
        settle_steps=15,
        settle_gripper=0.0,
        decoding=sampling(1.6),
        source="t",
    )
    greedy = RunProtocol(name="rlinf", max_steps=512, settle_steps=15, settle_gripper=0.0, decoding="greedy")
    assert episode_differences(greedy, baseline, "libero_goal") == []
    assert decoding_difference(greedy, baseline) == "decoding differs: greedy vs sampled T=1.6"
    assert decoding_difference(greedy.model_copy(update={"decoding": sampling(1.6)}), baseline) is None
    assert episode_differences(greedy.model_copy(update={"max_steps": 300}), baseline, "libero_goal") == [
        "max steps 300 vs 512"
    ]


def test_a_requests_protocol_and_error_policy_reach_every_eval_run_and_the_intake_has_them() -> None:
    from rlinf_bench.contracts import CheckpointRef, EvalRequest
    from rlinf_bench.intake.config import IntakeConfig

    ckpt = CheckpointRef(uri="s3://b/exp/checkpoints/global_step_1", experiment="exp", global_step=1)
    request = EvalRequest(checkpoint=ckpt, protocol="oft", on_episode_error="fail-episode")
    runs = request.expand()
    assert runs and all((r.protocol, r.on_episode_error) == ("oft", "fail-episode") for r in runs)
    assert EvalRequest(checkpoint=ckpt).protocol == "rlinf"  # the default baseline's (RLinf's paper numbers)
    assert IntakeConfig(protocol="oft").request_for(ckpt).protocol == "oft"
    assert request.digest() != EvalRequest(checkpoint=ckpt).digest()  # a different protocol is another matrix
