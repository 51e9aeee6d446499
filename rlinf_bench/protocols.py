"""Evaluation protocols: the episode settings a success rate was measured under.

Two LIBERO success rates are only comparable when their episodes were allowed the same number of
steps and settled the same way (:func:`episode_differences`); a difference in decoding (greedy vs
sampled) leaves the episode what it was and is stated next to the verdict (:func:`decoding_difference`). A *profile* (``--protocol oft|rlinf``) sets
those knobs as a reference evaluation does; the run records what it actually used
(:class:`RunProtocol`), and every baseline records what its source used (:class:`BaselineProtocol`).
:func:`protocol_differences` lists every setting that differs. Cheap to import (no simulator).

Sources (docs/evaluation.md, "How our numbers compare", gives file and line):

- ``oft``: OpenVLA-OFT ``experiments/robot/libero/run_libero_eval.py``: max steps 220/280/300/520/400,
  10 settle steps of ``[0, 0, 0, 0, 0, 0, -1]``, 256 px renders, greedy.
- ``rlinf``: RLinf v0.3 OpenVLA-OFT LIBERO configs (``evaluations/libero/*_openvlaoft_eval.yaml``,
  ``examples/embodiment/config/libero_*_grpo_openvlaoft.yaml``): 512 steps (520 on libero_10),
  15 settle steps of zeros (``reset_gripper_open: False``), 256 px, sampling at ``temperature_eval`` 1.6.
"""

from __future__ import annotations

from rlinf_bench.contracts.protocol_profiles import (
    DEFAULT_PROTOCOL,
    GREEDY,
    BaselineProtocol,
    EpisodeErrorPolicy,
    ProtocolProfile,
    RunProtocol,
    sampling,
)
from rlinf_bench.registry import Registry

__all__ = [
    "DEFAULT_PROTOCOL",
    "GREEDY",
    "PROFILES",
    "BaselineProtocol",
    "EpisodeErrorPolicy",
    "ProtocolProfile",
    "RunProtocol",
    "decoding_difference",
    "episode_differences",
    "get_profile",
    "protocol_differences",
    "sampling",
    "short_decoding",
]

PROFILES: Registry[ProtocolProfile] = Registry("protocol")
for _profile in (
    ProtocolProfile(
        name="oft",
        max_steps={
            "libero_spatial": 220,
            "libero_object": 280,
            "libero_goal": 300,
            "libero_10": 520,
            "libero_90": 400,
        },
        settle_steps=10,
        settle_gripper=-1.0,
        resolution=256,
        decoding=GREEDY,
        source="OpenVLA-OFT experiments/robot/libero/run_libero_eval.py (TASK_MAX_STEPS, num_steps_wait, env_img_res)",
    ),
    ProtocolProfile(
        name="rlinf",
        max_steps={
            "libero_spatial": 512,
            "libero_object": 512,
            "libero_goal": 512,
            "libero_10": 520,
            "libero_90": 512,
        },
        settle_steps=15,
        settle_gripper=0.0,
        resolution=256,
        decoding=sampling(1.6),
        source="RLinf v0.3 evaluations/libero/*_openvlaoft_eval.yaml and "
        "examples/embodiment/config/libero_*_grpo_openvlaoft.yaml; rlinf/envs/libero/libero_env.py reset()",
    ),
):
    PROFILES.register(_profile.name, value=_profile)


def get_profile(name: str) -> ProtocolProfile:
    """The profile called ``name`` (oft, rlinf); an unknown name lists the valid ones."""
    return PROFILES.get(name)


def episode_differences(run: RunProtocol, baseline: BaselineProtocol, suite: str) -> list[str]:
    """The settings that change what an episode *is* (max steps, settle steps, settle gripper): one phrase
    per difference; any of them makes the two rates different quantities (empty: comparable)."""
    out: list[str] = []
    ref_steps = baseline.max_steps.get(suite)
    if ref_steps is not None and ref_steps != run.max_steps:
        out.append(f"max steps {run.max_steps} vs {ref_steps}")
    if baseline.settle_steps != run.settle_steps:
        out.append(f"settle steps {run.settle_steps} vs {baseline.settle_steps}")
    if baseline.settle_gripper != run.settle_gripper:
        out.append(f"settle gripper {run.settle_gripper:g} vs {baseline.settle_gripper:g}")
    return out


def short_decoding(decoding: str) -> str:
    """``sampled T=1.6`` for ``sampling (temperature 1.6)``; any other label as it is."""
    prefix, suffix = "sampling (temperature ", ")"
    if decoding.startswith(prefix) and decoding.endswith(suffix):
        return f"sampled T={decoding[len(prefix) : -len(suffix)]}"
    return decoding


def decoding_difference(run: RunProtocol, baseline: BaselineProtocol) -> str | None:
    """``decoding differs: greedy vs sampled T=1.6`` when the run decodes otherwise than the baseline.

    Decoding does not change what an episode is (same steps, same start): the verdict is given, and this
    phrase goes on it, because sampling at a high temperature can move a success rate by points.
    """
    if run.decoding == baseline.decoding:
        return None
    return f"decoding differs: {short_decoding(run.decoding)} vs {short_decoding(baseline.decoding)}"


def protocol_differences(run: RunProtocol, baseline: BaselineProtocol, suite: str) -> list[str]:
    """Every setting that differs between a run of ``suite`` and a baseline, decoding included (empty: same)."""
    out = episode_differences(run, baseline, suite)
    if baseline.decoding != run.decoding:
        out.append(f"decoding {run.decoding} vs {baseline.decoding}")
    return out
