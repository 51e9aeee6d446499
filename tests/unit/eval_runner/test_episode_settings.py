"""A run's episode settings: explicit values over the protocol profile, the policy's resolution over the profile's."""

from __future__ import annotations

from typing import Any

import numpy as np

from eval_runner.episode_settings import render_spec, resolve_protocol, video_resolution, with_policy
from eval_runner.policies.base import ObservationSpec, Policy
from eval_runner.settings import EvalSettings
from rlinf_bench.contracts import CheckpointRef, EvalRun


def _run(**fields: Any) -> EvalRun:
    base: dict[str, Any] = {
        "request_id": "r",
        "checkpoint": CheckpointRef(uri="", experiment="none", global_step=0),
        "suite": "libero_goal",
        "run_index": 0,
        "seed": 0,
    }
    return EvalRun.model_validate({**base, **fields})


class _Cam(Policy):
    def __init__(self, resolution: int | None = None, decoding: str | None = None) -> None:
        self.obs_spec = ObservationSpec(cameras=("agentview",), resolution=resolution)
        self._decoding = decoding

    def act(self, obs: dict[str, Any]) -> Any:
        return np.zeros((len(obs["episode_id"]), 7))

    def describe(self) -> dict[str, Any]:
        return {"class": "cam", **({"decoding": self._decoding} if self._decoding else {})}


class _Blind(_Cam):
    def __init__(self) -> None:
        super().__init__()
        self.obs_spec = ObservationSpec()


def test_default_is_rlinfs_protocol_with_the_reference_rng_scheme() -> None:
    p = resolve_protocol(_run())
    assert (p.name, p.max_steps, p.settle_steps, p.settle_gripper) == ("rlinf", 512, 15, 0.0)
    assert (p.rng_scheme, p.on_episode_error, p.overrides) == ("reference-replay-v2", "fail-run", [])


def test_rlinf_profile_sets_rlinfs_steps_and_settle() -> None:
    p = resolve_protocol(_run(suite="libero_10", protocol="rlinf"))
    assert (p.name, p.max_steps, p.settle_steps, p.settle_gripper) == ("rlinf", 520, 15, 0.0)


def test_oft_profile_sets_ofts_steps_and_settle() -> None:
    p = resolve_protocol(_run(protocol="oft"))
    assert (p.name, p.max_steps, p.settle_steps, p.settle_gripper) == ("oft", 300, 10, -1.0)


def test_explicit_values_override_the_profile_and_are_listed() -> None:
    p = resolve_protocol(
        _run(protocol="rlinf", max_steps=100, settle_steps=3, settle_gripper=-1, on_episode_error="fail-episode")
    )
    assert (p.max_steps, p.settle_steps, p.settle_gripper, p.on_episode_error) == (100, 3, -1.0, "fail-episode")
    assert p.overrides == ["max_steps", "settle_steps", "settle_gripper"]
    # the older EvalSettings.settle_steps still works, and the EvalRun field wins over it
    assert resolve_protocol(_run(), EvalSettings(settle_steps=7)).settle_steps == 7
    assert resolve_protocol(_run(settle_steps=2), EvalSettings(settle_steps=7)).settle_steps == 2


def test_render_resolution_is_the_flag_else_the_policys_else_the_profiles() -> None:
    assert with_policy(resolve_protocol(_run()), _run(), _Cam()).render_resolution == 256
    assert with_policy(resolve_protocol(_run()), _run(), _Cam(128)).render_resolution == 128
    run = _run(resolution=64)
    assert with_policy(resolve_protocol(run), run, _Cam(128)).render_resolution == 64
    assert with_policy(resolve_protocol(_run()), _run(), _Blind()).render_resolution is None


def test_the_policy_says_how_it_decodes_and_silence_means_greedy() -> None:
    assert with_policy(resolve_protocol(_run()), _run(), _Cam()).decoding == "greedy"
    sampled = with_policy(resolve_protocol(_run()), _run(), _Cam(decoding="sampling (temperature 1.6)"))
    assert sampled.decoding == "sampling (temperature 1.6)"


def test_workers_render_the_policys_cameras_at_the_resolved_resolution() -> None:
    protocol = with_policy(resolve_protocol(_run()), _run(), _Cam())
    spec = render_spec(_Cam().obs_spec, protocol)
    assert spec.resolution == 256 and spec.cameras == ("agentview",)
    assert render_spec(_Blind().obs_spec, protocol) == _Blind().obs_spec


def test_videos_of_a_policy_without_cameras_are_at_the_protocols_resolution_not_its_class_default() -> None:
    # builtin:demo without cameras says 128 px; its video camera renders at the protocol's 256 (or the run's)
    blind = ObservationSpec(cameras=(), resolution=128)
    protocol = with_policy(resolve_protocol(_run()), _run(), _Blind())
    assert render_spec(blind, protocol, video_resolution=video_resolution(_run())).resolution == 256
    assert video_resolution(_run(resolution=320)) == 320
    # a policy with cameras: its videos are what it sees
    assert render_spec(_Cam(64).obs_spec, with_policy(resolve_protocol(_run()), _run(), _Cam(64))).resolution == 64
