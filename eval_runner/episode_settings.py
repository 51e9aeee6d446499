"""Resolve a run's episode settings from its protocol profile, its explicit overrides and its policy.

Precedence, for every setting: an explicit value (flag or EvalRun field) over the profile's. The
render resolution also listens to the policy: a policy that names a resolution in its ObservationSpec
gets it, one that names none gets the profile's (256 px, as every reference renders).
"""

from __future__ import annotations

from typing import Any

from eval_runner.policies.base import ObservationSpec, Policy
from eval_runner.scheduler import RNG_SCHEME
from eval_runner.settings import EvalSettings
from rlinf_bench.contracts import EvalRun
from rlinf_bench.protocols import GREEDY, RunProtocol, get_profile

__all__ = ["policy_decoding", "render_spec", "resolve_protocol", "video_resolution", "with_policy"]


def resolve_protocol(run: EvalRun, settings: EvalSettings | None = None) -> RunProtocol:
    """The run's max steps, settle steps and settle gripper: explicit values over the profile's.

    ``settings.settle_steps`` is the older place of the settle override (kept for scripts that use it);
    the EvalRun field wins over it.
    """
    profile = get_profile(run.protocol)
    overrides: list[str] = []
    settle = run.settle_steps
    if settle is None and settings is not None:
        settle = settings.settle_steps
    explicit: dict[str, Any] = {
        "max_steps": run.max_steps,
        "settle_steps": settle,
        "settle_gripper": run.settle_gripper,
        "render_resolution": run.resolution,
    }
    overrides = [name for name, value in explicit.items() if value is not None]
    return RunProtocol(
        name=profile.name,
        overrides=overrides,
        max_steps=run.max_steps or profile.max_steps_for(run.suite),
        settle_steps=profile.settle_steps if settle is None else settle,
        settle_gripper=profile.settle_gripper if run.settle_gripper is None else run.settle_gripper,
        render_resolution=run.resolution,
        rng_scheme=RNG_SCHEME,
        on_episode_error=run.on_episode_error,
        robustness=run.robustness,
    )


def policy_decoding(policy: Policy) -> str:
    """What the policy says about its decoding (``describe()["decoding"]``); deterministic policies are greedy."""
    try:
        value = policy.describe().get("decoding")
    except Exception:  # describe() is user code; a broken one must not hide the decoding question
        value = None
    return str(value) if value else GREEDY


def with_policy(protocol: RunProtocol, run: EvalRun, policy: Policy) -> RunProtocol:
    """The protocol completed with what the policy decides: render resolution and decoding."""
    spec = policy.obs_spec
    resolution: int | None = None
    if spec.cameras:
        resolution = run.resolution or spec.resolution or get_profile(run.protocol).resolution
    return protocol.model_copy(update={"render_resolution": resolution, "decoding": policy_decoding(policy)})


def video_resolution(run: EvalRun) -> int:
    """Side of a video frame for a policy that renders no camera: the run's resolution or its protocol's (256)."""
    return run.resolution or get_profile(run.protocol).resolution


def render_spec(
    spec: ObservationSpec, protocol: RunProtocol | None, *, video_resolution: int | None = None
) -> ObservationSpec:
    """The ObservationSpec the workers render: the policy's, at the run's resolved resolution.

    A policy with cameras has its videos at the resolution it sees; one without renders only the video
    camera, at ``video_resolution`` (given: the protocol's, not the policy class's unused default).
    """
    if not spec.cameras:
        return spec if video_resolution is None else spec.model_copy(update={"resolution": video_resolution})
    resolution = protocol.render_resolution if protocol is not None else None
    if resolution is None or resolution == spec.resolution:
        return spec
    return spec.model_copy(update={"resolution": resolution})
