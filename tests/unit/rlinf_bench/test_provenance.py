"""Provenance names versions, code, machine, rendering backend and the weights' digest."""

from __future__ import annotations

import pytest

from rlinf_bench.provenance import collect_provenance, git_sha


class FixedGpus:
    """A GPU describer that sees the GPUs it is given (the Jobs pass NVML's)."""

    def __init__(self, *gpus: str) -> None:
        self.gpus = list(gpus)

    def visible_gpus(self) -> list[str]:
        return self.gpus


H100 = "NVIDIA H100 80GB HBM3 (81559 MiB, driver 550.54.15)"


def test_given_a_policy_description_then_provenance_carries_its_weights_digest_and_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("IMAGE_DIGEST", "sha256:abc")
    monkeypatch.setenv("MUJOCO_GL", "egl")
    monkeypatch.setenv("MUJOCO_EGL_DEVICE_ID", "3")

    prov = collect_provenance(
        gpus=FixedGpus(H100), command=["eval", "--x"], policy={"class": "P", "weights_sha256": "f" * 64}
    )

    assert prov.checkpoint_sha256 == "f" * 64
    assert prov.extra["policy"]["class"] == "P"
    assert prov.image_digest == "sha256:abc"
    assert prov.rendering_backend == "egl (EGL device 3)"
    assert prov.command == ["eval", "--x"]
    assert prov.gpu == [H100]  # what the describer passed in says
    assert {"rlinf-libero", "robosuite", "mujoco", "torch"} <= set(prov.packages)
    assert prov.cpu_count >= 1 and prov.host and prov.python


def test_given_git_sha_in_the_environment_then_it_wins_over_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_SHA", "deadbeef")
    assert git_sha() == "deadbeef"
    monkeypatch.delenv("GIT_SHA")
    sha = git_sha()
    assert sha is None or len(sha.removesuffix("-dirty")) == 40


def test_given_a_remote_policy_description_then_the_served_weights_digest_is_found() -> None:
    description = {"class": "ServerPolicy", "url": "ws://h:1", "server": {"class": "P", "weights_sha256": "ab" * 32}}
    assert collect_provenance(gpus=FixedGpus(), command=[], policy=description).checkpoint_sha256 == "ab" * 32
    assert collect_provenance(gpus=FixedGpus(), command=[], policy={"class": "ZeroPolicy"}).checkpoint_sha256 is None
