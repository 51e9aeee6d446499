"""builtin:demo really evaluates the checkpoint it is given."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from eval_runner.demo_checkpoint import write_demo_checkpoint
from eval_runner.policies.demo_mlp import DemoPolicy
from eval_runner.policies.factory import load_policy
from rlinf_bench.errors import CheckpointError, PolicyError

WEIGHTS = "actor/model_state_dict/full_weights.pt"


def torch_reference(state: dict[str, torch.Tensor], obs: dict[str, Any]) -> np.ndarray:
    """The demo network written independently in torch, from the documented parameter table."""
    x = torch.cat([torch.as_tensor(obs[k]) for k in ("robot0_eef_pos", "robot0_eef_quat", "robot0_gripper_qpos")], 1)
    x = (x - state["input_mean"]) / state["input_std"]
    net = torch.nn.Sequential(
        torch.nn.Linear(9, state["net.0.weight"].shape[0]),
        torch.nn.Tanh(),
        torch.nn.Linear(state["net.0.weight"].shape[0], 7),
    )
    net.load_state_dict({k.removeprefix("net."): v for k, v in state.items() if k.startswith("net.")})
    with torch.no_grad():
        out = net(x)
    actions = torch.tanh(out) * state["action_scale"]
    actions[:, 6] = torch.where(out[:, 6] > 0, 1.0, -1.0)
    return actions.numpy()


def test_given_demo_checkpoint_then_actions_are_the_stored_network_applied(demo_ckpt: Path, obs_factory: Any) -> None:
    obs = obs_factory(6)
    actions = load_policy("builtin:demo", demo_ckpt).act(obs)
    state = torch.load(demo_ckpt / WEIGHTS, weights_only=True)
    assert actions.shape == (6, 7) and actions.dtype == np.float32
    np.testing.assert_allclose(actions, torch_reference(state, obs), rtol=1e-5, atol=1e-6)
    assert len({tuple(row) for row in actions.round(5)}) == 6  # rows depend on each row's observation


def test_given_other_checkpoint_then_actions_change(tmp_path: Path, obs_factory: Any) -> None:
    obs = obs_factory(4)
    seed0 = Path(write_demo_checkpoint(tmp_path, "a", seed=0).uri)
    seed0_again = Path(write_demo_checkpoint(tmp_path, "b", seed=0).uri)
    seed1 = Path(write_demo_checkpoint(tmp_path, "c", seed=1).uri)
    a, b, c = (load_policy("builtin:demo", p).act(obs) for p in (seed0, seed0_again, seed1))
    assert np.array_equal(a, b)
    assert not np.allclose(a[:, :6], c[:, :6])


def test_given_one_weight_edited_in_the_file_then_actions_follow(demo_ckpt: Path, obs_factory: Any) -> None:
    obs = obs_factory(3)
    before = load_policy("builtin:demo", demo_ckpt).act(obs)
    state = torch.load(demo_ckpt / WEIGHTS, weights_only=True)
    state["net.2.bias"][0] += 1.0
    torch.save(state, demo_ckpt / WEIGHTS)
    after = load_policy("builtin:demo", demo_ckpt).act(obs)
    assert (after[:, 0] > before[:, 0]).all()
    np.testing.assert_array_equal(after[:, 1:6], before[:, 1:6])


def test_given_same_observations_then_demo_is_deterministic(demo_ckpt: Path, obs_factory: Any) -> None:
    policy = load_policy("builtin:demo", demo_ckpt)
    assert np.array_equal(policy.act(obs_factory(5)), policy.act(obs_factory(5)))


def test_given_an_episode_in_any_batch_then_its_action_is_bit_identical(demo_ckpt: Path, obs_factory: Any) -> None:
    # An episode's trajectory must not depend on which episodes share its vector step (worker count).
    policy = load_policy("builtin:demo?cameras=agentview&resolution=32", demo_ckpt)
    batch = obs_factory(7, cameras=("agentview",))
    together = policy.act(batch)
    for i in range(7):
        alone = {k: v[i : i + 1] for k, v in batch.items()}  # arrays and lists slice alike
        assert np.array_equal(policy.act(alone)[0], together[i])


def test_given_describe_then_it_traces_the_weights_file(demo_ckpt: Path) -> None:
    info = load_policy("builtin:demo", demo_ckpt).describe()
    weights = demo_ckpt / WEIGHTS
    state = torch.load(weights, weights_only=True)
    assert info["weights_file"] == str(weights)
    assert info["weights_sha256"] == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert info["parameters"] == sum(t.numel() for t in state.values())
    assert info["spec"] == "builtin:demo"


def test_given_no_cameras_option_then_demo_needs_no_renderer(demo_ckpt: Path) -> None:
    spec = load_policy("builtin:demo", demo_ckpt).obs_spec
    assert not spec.needs_renderer
    assert spec.proprio == ("robot0_eef_pos", "robot0_eef_quat", "robot0_gripper_qpos")


def test_given_cameras_option_then_images_are_requested_and_change_actions(demo_ckpt: Path, obs_factory: Any) -> None:
    policy = load_policy("builtin:demo?cameras=agentview,robot0_eye_in_hand&resolution=64", demo_ckpt)
    assert policy.obs_spec.cameras == ("agentview", "robot0_eye_in_hand") and policy.obs_spec.resolution == 64
    obs = obs_factory(2, cameras=("agentview", "robot0_eye_in_hand"), resolution=64)
    dark = {**obs, "agentview_image": np.zeros_like(obs["agentview_image"])}
    bright = {**obs, "agentview_image": np.full_like(obs["agentview_image"], 255)}
    assert not np.allclose(policy.act(dark)[:, :6], policy.act(bright)[:, :6])
    with pytest.raises(PolicyError, match="'robot0_eye_in_hand_image'"):
        policy.act({k: v for k, v in obs.items() if k != "robot0_eye_in_hand_image"})


def test_given_missing_proprio_key_then_error_names_it(demo_ckpt: Path, obs_factory: Any) -> None:
    obs = obs_factory(2)
    del obs["robot0_eef_quat"]
    with pytest.raises(PolicyError, match="'robot0_eef_quat'"):
        load_policy("builtin:demo", demo_ckpt).act(obs)


def test_given_no_checkpoint_then_error_asks_for_one() -> None:
    with pytest.raises(CheckpointError, match="pass --checkpoint"):
        load_policy("builtin:demo", None)


def test_given_missing_directory_then_error_names_it(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match=str(tmp_path / "nope")):
        load_policy("builtin:demo", tmp_path / "nope")


def test_given_checkpoint_without_weights_then_error_says_incomplete(demo_ckpt: Path) -> None:
    (demo_ckpt / WEIGHTS).unlink()
    with pytest.raises(CheckpointError, match=r"no weights file .* incomplete"):
        load_policy("builtin:demo", demo_ckpt)


def test_given_truncated_weights_then_error_names_file_and_fix(demo_ckpt: Path) -> None:
    weights = demo_ckpt / WEIGHTS
    weights.write_bytes(weights.read_bytes()[:200])
    with pytest.raises(CheckpointError) as exc:
        load_policy("builtin:demo", demo_ckpt)
    assert str(weights) in str(exc.value) and "corrupt or truncated" in str(exc.value)
    assert "python -m eval_runner.demo_checkpoint" in str(exc.value)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s.pop("net.2.bias"), "missing net.2.bias"),
        (lambda s: s.__setitem__("image_proj.weight", torch.zeros(7, 4)), r"image_proj.weight has shape \(7, 4\)"),
        (lambda s: s.__setitem__("net.2.weight", torch.zeros(7, 16)), r"net.2.weight has shape \(7, 16\)"),
        (lambda s: s["net.0.bias"].__setitem__(0, float("nan")), "NaN or inf"),
        (lambda s: s["input_std"].__setitem__(0, 0.0), "input_std must be > 0"),
    ],
)
def test_given_wrong_parameters_then_checkpoint_error_names_the_key(demo_ckpt: Path, edit: Any, message: str) -> None:
    weights = demo_ckpt / WEIGHTS
    state = torch.load(weights, weights_only=True)
    edit(state)
    torch.save(state, weights)
    with pytest.raises(CheckpointError, match=message):
        load_policy("builtin:demo", demo_ckpt)


def test_given_weights_file_that_is_not_a_dict_then_error(demo_ckpt: Path) -> None:
    torch.save([torch.zeros(3)], demo_ckpt / WEIGHTS)
    with pytest.raises(CheckpointError, match="not a state dict"):
        load_policy("builtin:demo", demo_ckpt)


def test_given_weights_file_path_directly_then_it_loads(demo_ckpt: Path, obs_factory: Any) -> None:
    policy = load_policy("builtin:demo", demo_ckpt / WEIGHTS)
    assert isinstance(policy, DemoPolicy) and policy.act(obs_factory(1)).shape == (1, 7)


def test_given_resolution_out_of_range_then_error(demo_ckpt: Path) -> None:
    with pytest.raises(PolicyError, match="resolution=8"):
        load_policy("builtin:demo?cameras=agentview&resolution=8", demo_ckpt)
