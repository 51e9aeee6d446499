"""The msgpack + numpy frame format of the policy-server protocol."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest

from eval_runner.policies.wire import WireError, pack, unpack


def test_given_observation_batch_then_it_round_trips_exactly() -> None:
    rng = np.random.default_rng(0)
    batch = {
        "agentview_image": rng.integers(0, 256, size=(3, 8, 8, 3), dtype=np.uint8),
        "robot0_eef_pos": rng.normal(size=(3, 3)).astype(np.float32),
        "mask": np.array([True, False, True]),
        "step": np.int64(7),
        "task_description": ["a", "b", "c"],
        "episode_id": ("e0", "e1", "e2"),
    }
    decoded = unpack(pack(batch))
    for key in ("agentview_image", "robot0_eef_pos", "mask"):
        assert decoded[key].dtype == batch[key].dtype and np.array_equal(decoded[key], batch[key])
        decoded[key][...] = 0  # receivers own writable arrays
    assert decoded["step"] == 7 and decoded["step"].dtype == np.int64
    assert decoded["episode_id"] == ["e0", "e1", "e2"]


def test_given_arrays_then_frames_use_the_documented_ndarray_map() -> None:
    # A non-Python server reads exactly these fields (docs/policies.md).
    raw = msgpack.unpackb(pack({"a": np.arange(6, dtype="<f4").reshape(2, 3)}), raw=False)
    assert raw["a"] == {
        "__ndarray__": True,
        "data": np.arange(6, dtype="<f4").tobytes(),
        "dtype": "<f4",
        "shape": [2, 3],
    }


def test_given_non_contiguous_array_then_it_is_sent_in_c_order() -> None:
    array = np.arange(12, dtype=np.int16).reshape(3, 4).T
    assert np.array_equal(unpack(pack(array)), array)


@pytest.mark.parametrize("frame", ["text frame", b"\xc1", msgpack.packb({"__ndarray__": True, "dtype": "<f4"})])
def test_given_bad_frames_then_wire_error(frame: bytes | str) -> None:
    with pytest.raises(WireError):
        unpack(frame)


def test_given_object_array_or_unknown_type_then_pack_refuses() -> None:
    with pytest.raises(TypeError, match="dtype object"):
        pack({"x": np.array([object()])})
    with pytest.raises(TypeError, match="cannot send a set"):
        pack({"x": {1, 2}})
