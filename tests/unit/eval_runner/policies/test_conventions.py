"""The reference conventions, checked against the references' own functions where they install here
(openpi-client's image_tools, robosuite's quat2axisangle) and against hand-checked values otherwise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from eval_runner.policies.conventions import (
    STATE_KEYS,
    convention_names,
    get_convention,
    jpeg_lanczos_resize,
    jpeg_round_trip,
    lanczos3_resize,
    libero_state,
    map_gripper,
    quat_to_axis_angle,
    resize_with_pad,
    rotate_180,
)
from rlinf_bench.errors import PolicyError
from tests.policy_fixtures import make_obs

FIXTURES = Path(__file__).with_name("fixtures")

image_tools = pytest.importorskip("openpi_client.image_tools", reason="pip install 'rlinf-bench[openpi]'")
transform_utils = pytest.importorskip("robosuite.utils.transform_utils", reason="pip install 'rlinf-bench[libero]'")


def _frames(batch: int, size: int, seed: int = 0) -> np.ndarray:
    """Smooth gradients plus noise: resizing them exercises interpolation, not just constants."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size]
    base = np.stack([xx, yy, (xx + yy) // 2], axis=-1) * (255.0 / (size - 1))
    noise = rng.integers(-20, 21, size=(batch, size, size, 3))
    return np.clip(base[None] + noise, 0, 255).astype(np.uint8)


def test_rotate_180_moves_the_top_left_pixel_to_the_bottom_right_as_every_reference_does() -> None:
    imgs = _frames(2, 8)
    out = rotate_180(imgs)
    assert out.shape == imgs.shape and out.flags["C_CONTIGUOUS"]
    assert np.array_equal(out[1, -1, -1], imgs[1, 0, 0])
    assert np.array_equal(out, np.stack([img[::-1, ::-1] for img in imgs]))  # OFT's get_libero_image, per image


@pytest.mark.parametrize("shape", [(3, 256, 256, 3), (256, 256, 3), (2, 200, 256, 3), (1, 256, 180, 3)])
def test_resize_with_pad_equals_openpi_image_tools_pixel_for_pixel(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(1)
    imgs = rng.integers(0, 256, size=shape, dtype=np.uint8)
    ours = resize_with_pad(imgs, 224, 224)
    theirs = image_tools.convert_to_uint8(image_tools.resize_with_pad(imgs, 224, 224))
    assert ours.dtype == np.uint8 and ours.shape == theirs.shape
    assert np.array_equal(ours, theirs)


def test_resize_with_pad_leaves_images_at_the_target_size_untouched() -> None:
    imgs = _frames(2, 224)
    assert resize_with_pad(imgs, 224, 224) is imgs


def test_quat_to_axis_angle_equals_robosuite_including_the_clipped_and_zero_rotation_cases() -> None:
    rng = np.random.default_rng(2)
    quats = rng.normal(size=(20, 4))
    quats /= np.linalg.norm(quats, axis=1, keepdims=True)
    quats = np.concatenate([quats, [[0, 0, 0, 1.0], [0, 0, 0, 1.0000001], [0.1, 0.2, 0.3, -1.2]]])
    ours = quat_to_axis_angle(quats)
    theirs = np.stack([transform_utils.quat2axisangle(q.copy()) for q in quats])
    assert np.array_equal(ours, theirs)
    assert np.array_equal(ours[20], np.zeros(3))


def test_libero_state_is_eef_pos_axis_angle_and_gripper_qpos_in_that_order() -> None:
    obs = {k: v.astype(np.float64) for k, v in make_obs(3).items() if k in STATE_KEYS}
    state = libero_state(obs)
    assert state.shape == (3, 8)
    for i in range(3):
        expected = np.concatenate(
            [
                obs["robot0_eef_pos"][i],
                transform_utils.quat2axisangle(obs["robot0_eef_quat"][i].copy()),
                obs["robot0_gripper_qpos"][i],
            ]
        )
        assert np.array_equal(state[i], expected)
    single = libero_state({k: v[0] for k, v in obs.items()})
    assert np.array_equal(single, state[0])


def test_libero_state_names_the_missing_keys() -> None:
    with pytest.raises(PolicyError, match="robot0_eef_quat"):
        libero_state({"robot0_eef_pos": np.zeros(3), "robot0_gripper_qpos": np.zeros(2)})


def test_openvla_gripper_mapping_binarizes_and_inverts_like_oft_process_action() -> None:
    # OFT: normalize_gripper_action(binarize=True) then invert_gripper_action; hand-checked values.
    actions = np.zeros((5, 7))
    actions[:, -1] = [0.0, 0.2, 0.5, 0.8, 1.0]
    actions[:, 0] = 0.3
    out = map_gripper(actions, "openvla")
    assert out[:, -1].tolist() == [1.0, 1.0, 0.0, -1.0, -1.0]  # 1 = open in OpenVLA's data -> -1 = open in LIBERO
    assert np.array_equal(out[:, :6], actions[:, :6])
    assert actions[0, -1] == 0.0  # the caller's array is not modified
    assert map_gripper(actions, "binarize")[:, -1].tolist() == [-1.0, -1.0, 0.0, 1.0, 1.0]
    assert np.array_equal(map_gripper(actions, "none"), actions)


def test_unknown_gripper_mapping_or_bad_action_shape_is_a_clear_error() -> None:
    with pytest.raises(PolicyError, match="valid: binarize, none, openvla"):
        map_gripper(np.zeros((1, 7)), "flip")
    with pytest.raises(PolicyError, match=r"\[\.\.\., 7\]"):
        map_gripper(np.zeros((1, 6)), "openvla")


@pytest.mark.parametrize("name", ["libero", "pattern"])
def test_oft_resize_equals_tensorflows_as_ofts_resize_image_for_policy_computes_it(name: str) -> None:
    # TF's outputs, produced by fixtures/make_oft_resize_fixture.py (TensorFlow is not a dependency here).
    data = np.load(FIXTURES / "oft_resize_tf.npz")
    image, tf_jpeg, tf_resized = data[f"{name}_image"], data[f"{name}_jpeg"], data[f"{name}_resized"]

    assert np.array_equal(jpeg_round_trip(image), tf_jpeg)  # bit for bit, fast-DCT decoding included
    ours = jpeg_lanczos_resize(image, tf_resized.shape[0])
    diff = np.abs(ours.astype(int) - tf_resized.astype(int))
    assert ours.shape == tf_resized.shape and ours.dtype == np.uint8
    assert diff.max() <= 1 and (diff > 0).mean() < 0.001  # float rounding in the last place of a few pixels
    assert np.array_equal(lanczos3_resize(tf_jpeg, tf_resized.shape[0]), ours)


def test_lanczos3_resize_keeps_flat_colours_and_edge_positions() -> None:
    flat = np.full((1, 256, 256, 3), (120, 60, 200), dtype=np.uint8)
    assert np.array_equal(lanczos3_resize(flat, 224), np.full((1, 224, 224, 3), (120, 60, 200), dtype=np.uint8))
    edge = np.zeros((256, 256, 3), dtype=np.uint8)
    edge[:, 128:] = 255
    row = lanczos3_resize(edge, 224)[112, :, 0].astype(int)
    assert row[:105].max() <= 8 and row[119:].min() >= 247
    assert int(np.argmax(row >= 128)) in (111, 112)


def test_each_convention_prepares_a_batch_like_its_reference() -> None:
    batch = make_obs(2, cameras=("agentview", "robot0_eye_in_hand"), resolution=256)
    flipped = np.stack([img[::-1, ::-1] for img in batch["agentview_image"]])

    openpi = get_convention("openpi").inputs(batch)
    expected = image_tools.convert_to_uint8(image_tools.resize_with_pad(flipped, 224, 224))
    assert np.array_equal(openpi.main_images, expected)
    assert openpi.wrist_images is not None and openpi.wrist_images.shape == (2, 224, 224, 3)
    assert openpi.prompts == batch["task_description"] and openpi.states.shape == (2, 8)

    rlinf = get_convention("rlinf").inputs(batch)
    assert np.array_equal(rlinf.main_images, flipped)  # RLinf hands the model 256 px, flipped only

    oft = get_convention("oft").inputs(batch)
    assert oft.main_images.shape == (2, 224, 224, 3)
    assert np.array_equal(oft.main_images, jpeg_lanczos_resize(flipped, 224))


def test_convention_obs_spec_asks_for_both_cameras_at_256_px_and_the_state_keys() -> None:
    spec = get_convention("oft").obs_spec()
    assert spec.cameras == ("agentview", "robot0_eye_in_hand") and spec.resolution == 256
    assert spec.proprio == STATE_KEYS
    assert get_convention("openpi").obs_spec(wrist=False).cameras == ("agentview",)
    assert get_convention("rlinf").to_env_actions(np.full((1, 7), 0.9))[0, -1] == -1.0
    assert get_convention("openpi").to_env_actions(np.full((1, 7), 0.9))[0, -1] == 0.9


def test_unknown_convention_lists_the_valid_names() -> None:
    assert convention_names() == ["oft", "openpi", "rlinf"]
    with pytest.raises(PolicyError, match="valid: oft, openpi, rlinf"):
        get_convention("lerobot")


def test_convention_without_the_main_camera_says_which_spec_to_use() -> None:
    with pytest.raises(PolicyError, match="obs_spec"):
        get_convention("oft").inputs(make_obs(1))
