"""CUDA device -> EGL device mapping for rendering on the policy's GPU."""

from __future__ import annotations

import os

import pytest

from eval_runner.egl import assign_egl_device, egl_index_for_cuda, query_egl_cuda_ordinals


def test_given_the_orderings_seen_on_a_two_gpu_node_then_the_visible_cuda_device_maps_to_its_egl_index() -> None:
    # Read with query_egl_cuda_ordinals() on 2x H200 (driver 580): EGL always lists both GPUs, and the
    # CUDA ordinal it reports follows CUDA_VISIBLE_DEVICES.
    seen = {"unset": [0, 1], "0": [0, None], "1": [None, 0], "1,0": [1, 0]}
    assert {cvd: egl_index_for_cuda(0, ordinals) for cvd, ordinals in seen.items()} == {
        "unset": 0,
        "0": 0,
        "1": 1,
        "1,0": 1,
    }


def test_given_egl_devices_in_a_different_order_than_cuda_then_the_matching_index_is_found() -> None:
    # e.g. a container where EGL lists the GPUs as CUDA 2, 0, 1 and a Mesa software device last
    ordinals = [2, 0, 1, None]
    assert egl_index_for_cuda(0, ordinals) == 1
    assert egl_index_for_cuda(2, ordinals) == 0
    assert egl_index_for_cuda(5, ordinals) is None


def test_given_an_explicit_egl_device_then_it_is_respected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MUJOCO_EGL_DEVICE_ID", "3")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert assign_egl_device() == 3


def test_given_no_cuda_devices_then_nothing_is_mapped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MUJOCO_EGL_DEVICE_ID", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert assign_egl_device() is None
    assert "MUJOCO_EGL_DEVICE_ID" not in os.environ


def test_given_this_cpu_box_then_no_egl_device_reports_a_cuda_ordinal(monkeypatch: pytest.MonkeyPatch) -> None:
    ordinals = query_egl_cuda_ordinals()  # real libEGL query (Mesa here)
    assert ordinals is None or all(o is None for o in ordinals)
    monkeypatch.delenv("MUJOCO_EGL_DEVICE_ID", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert assign_egl_device() is None  # no NVIDIA EGL device: keep the default
