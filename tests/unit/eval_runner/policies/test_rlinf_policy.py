"""The ``rlinf:`` policy on hand-built observation batches, with the real rlinf package (no simulator).

Models are rlinf's own ``mlp_policy`` and custom types registered through rlinf's ``register_model``
(tests/rlinf_fixtures.py), saved in RLinf's checkpoint layout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

pytest.importorskip("rlinf", reason="rlinf lives in .venv-rlinf (its antlr4 pin breaks moto here): make test-rlinf")

from eval_runner.policies.factory import load_policy, valid_schemes
from eval_runner.policies.rlinf_config import MODE_EVAL_TYPES, OPENVLA_GRIPPER_TYPES, eval_kwargs, load_config
from eval_runner.policies.rlinf_policy import RlinfPolicy
from rlinf_bench.errors import CheckpointError, PolicyError
from tests import rlinf_fixtures as F
from tests.policy_fixtures import make_obs

PLUGIN = "plugins=tests.rlinf_fixtures&images=0"


def _mlp(tmp_path: Path, *, temperature_eval: float = -1.0, seed: int = 1) -> tuple[Any, Path, Path]:
    model = F.build(F.mlp_section(), seed=seed)
    step = F.write_checkpoint(tmp_path / "run", model)
    config = F.write_run_config(tmp_path / "run" / "config.yaml", F.mlp_section(), temperature_eval=temperature_eval)
    return model, step, config


def _states(obs: dict[str, Any]) -> torch.Tensor:
    """RLinf's 8-d LIBERO state, computed with rlinf's own quat2axisangle (envs/libero/utils.py's copy of robosuite's)."""
    from robosuite.utils.transform_utils import quat2axisangle

    rows = [
        np.concatenate(
            [
                obs["robot0_eef_pos"][i],
                quat2axisangle(obs["robot0_eef_quat"][i].astype(np.float64).copy()),
                obs["robot0_gripper_qpos"][i],
            ]
        )
        for i in range(len(obs["episode_id"]))
    ]
    return torch.tensor(np.stack(rows), dtype=torch.float32)


def test_given_an_rlinf_run_checkpoint_then_actions_equal_the_rlinf_model_called_directly(tmp_path: Path) -> None:
    model, step, config = _mlp(tmp_path)
    policy = load_policy(f"rlinf:{config}?batch=0", step)
    obs = make_obs(3)

    actions = policy.act(obs)

    direct, _ = model.predict_action_batch(env_obs={"states": _states(obs)}, mode="eval")
    assert actions.shape == (3, 7) and actions.dtype == np.float32
    np.testing.assert_array_equal(actions, direct[:, 0, :].numpy())
    assert policy.obs_spec.cameras == ()  # a state policy renders nothing


def test_given_fixed_size_forward_passes_then_a_row_does_not_depend_on_its_batch(tmp_path: Path) -> None:
    _, step, config = _mlp(tmp_path)
    obs = make_obs(5)
    together = load_policy(f"rlinf:{config}", step).act(obs)
    alone = [load_policy(f"rlinf:{config}", step).act({k: v[i : i + 1] for k, v in obs.items()}) for i in range(5)]
    np.testing.assert_array_equal(together, np.concatenate(alone))


def test_given_weights_from_the_checkpoint_then_they_are_loaded_and_their_digests_recorded(tmp_path: Path) -> None:
    _, step, config = _mlp(tmp_path, seed=1)
    other = F.write_checkpoint(tmp_path / "other", F.build(F.mlp_section(), seed=2))
    obs = make_obs(2)

    policy = load_policy(f"rlinf:{config}", step)
    described = policy.describe()

    assert not np.array_equal(policy.act(obs), load_policy(f"rlinf:{config}", other).act(obs))
    weights = step / "actor" / "model_state_dict" / "full_weights.pt"
    assert described["weights_file"] == str(weights)
    assert len(described["weights_sha256"]) == 64 and len(described["config_sha256"]) == 64
    assert described["model_type"] == "mlp_policy" and described["rlinf_version"] == "0.3.0"
    assert described["precision"] == "fp32" and described["chunk_size"] == 1 and described["greedy"] is True


def test_given_temperature_eval_above_zero_then_decoding_is_greedy_and_the_override_recorded(tmp_path: Path) -> None:
    _, step, config = _mlp(tmp_path, temperature_eval=1.6)
    policy = load_policy(f"rlinf:{config}", step)
    override = policy.describe()["greedy_override"]
    assert override["config_value"] == 1.6 and override["key"] == "rollout.sampling_params.temperature_eval"

    _, _, greedy_config = _mlp(tmp_path / "greedy", temperature_eval=-1.0)
    assert load_policy(f"rlinf:{greedy_config}", step).describe()["greedy_override"] is None


def test_given_a_sampling_config_for_a_token_model_then_do_sample_is_forced_off(tmp_path: Path) -> None:
    oft = load_config(
        F.write_run_config(
            tmp_path / "oft.yaml", {"model_type": "openvla_oft", "precision": "bf16"}, temperature_eval=1.6
        ),
        {},
    )
    assert eval_kwargs(oft).kwargs["do_sample"] is False and eval_kwargs(oft).override is not None
    mlp = load_config(F.write_run_config(tmp_path / "mlp.yaml", F.mlp_section(), temperature_eval=1.6), {})
    assert eval_kwargs(mlp).kwargs == {"mode": "eval"}
    # the custom chunk model samples when do_sample is true: greedy runs must repeat exactly
    config = F.write_run_config(tmp_path / "chunk.yaml", F.chunk_section(8), temperature_eval=1.6)
    obs = make_obs(2)
    first = load_policy(f"rlinf:{config}?{PLUGIN}", None)
    torch.manual_seed(0)
    again = load_policy(f"rlinf:{config}?{PLUGIN}", None)
    again.model.load_state_dict(first.model.state_dict())
    np.testing.assert_array_equal(first.act(obs), again.act(obs))


def test_given_chunk_size_8_then_each_call_returns_every_rows_chunk_for_the_runner(tmp_path: Path) -> None:
    config = F.write_run_config(tmp_path / "chunk.yaml", F.chunk_section(8))
    policy = load_policy(f"rlinf:{config}?{PLUGIN}", None)
    assert isinstance(policy, RlinfPolicy)
    obs = make_obs(2)

    chunks = policy.act(obs)

    assert chunks.shape == (2, 8, 7) and policy.model.calls == 1 and policy.model_rows == 2
    direct, _ = policy.model.predict_action_batch(env_obs={"states": _states(obs)}, do_sample=False)
    np.testing.assert_allclose(chunks, direct.detach().numpy(), rtol=0, atol=1e-6)
    policy.act(obs)  # the runner asks again only after a chunk: a new forward pass
    assert policy.model_calls == 2 and policy.describe()["chunks_executed_by"] == "runner"


def test_given_chunks_kept_in_the_policy_then_the_model_is_called_once_per_8_steps(tmp_path: Path) -> None:
    config = F.write_run_config(tmp_path / "chunk.yaml", F.chunk_section(8))
    policy = load_policy(f"rlinf:{config}?{PLUGIN}&chunks=policy", None)
    assert isinstance(policy, RlinfPolicy)
    obs = make_obs(2)

    chunk = [policy.act(obs) for _ in range(8)]
    assert policy.model.calls == 1 and policy.model_rows == 2
    policy.act(obs)
    assert policy.model.calls == 2 and policy.model_rows == 4
    # the executed actions are the chunk, in order
    direct, _ = policy.model.predict_action_batch(env_obs={"states": _states(obs)}, do_sample=False)
    np.testing.assert_allclose(np.stack(chunk, axis=1), direct.detach().numpy(), rtol=0, atol=1e-6)


def test_given_no_padding_then_chunks_are_served_between_calls_and_all_rows_share_one_pass(tmp_path: Path) -> None:
    config = F.write_run_config(tmp_path / "chunk.yaml", F.chunk_section(8))
    policy = load_policy(f"rlinf:{config}?{PLUGIN}&batch=0&chunks=policy", None)
    obs = make_obs(20)
    for _ in range(3):
        assert policy.act(obs).shape == (20, 7)
    assert policy.model.calls == 1 and policy.model_rows == 20


def test_given_an_episode_that_ends_mid_chunk_then_its_next_episode_starts_with_a_fresh_call(tmp_path: Path) -> None:
    config = F.write_run_config(tmp_path / "chunk.yaml", F.chunk_section(8))
    policy = load_policy(f"rlinf:{config}?{PLUGIN}&chunks=policy", None)
    obs = make_obs(2)
    for _ in range(3):
        policy.act(obs)  # both episodes three steps into their chunk
    obs["episode_id"] = ["task0-trial0", "task0-trial9"]  # the second episode ended; a new one took its row
    policy.reset(["task0-trial9"])
    policy.act(obs)
    assert policy.model_rows == 3  # one new row predicted: the new episode's; the old one's leftovers dropped
    assert policy.model.calls == 2


def test_given_a_flow_model_then_starting_noise_is_seeded_per_episode_not_per_batch(tmp_path: Path) -> None:
    config = F.write_run_config(tmp_path / "noise.yaml", {**F.chunk_section(4), "model_type": F.NOISE_TYPE})
    obs = make_obs(3)

    def run(spec_extra: str = "", rows: slice = slice(None)) -> np.ndarray:
        torch.manual_seed(123)
        policy = load_policy(f"rlinf:{config}?{PLUGIN}{spec_extra}", None)
        policy.model.proj.load_state_dict({"weight": torch.zeros(7, 8), "bias": torch.zeros(7)})
        return policy.act({k: v[rows] for k, v in obs.items()})

    together, last_alone = run(), run(rows=slice(2, 3))
    np.testing.assert_array_equal(together[2:], last_alone)
    assert not np.allclose(together[0], together[1])  # each episode its own noise
    assert not np.allclose(run("&seed=1"), together)
    with torch.random.fork_rng():
        torch.manual_seed(999)  # the global RNG does not matter
        np.testing.assert_array_equal(run(), together)


def test_given_episode_seeds_in_the_batch_then_the_noise_follows_them(tmp_path: Path) -> None:
    config = F.write_run_config(tmp_path / "noise.yaml", {**F.chunk_section(4), "model_type": F.NOISE_TYPE})
    obs = make_obs(2)

    def run(seeds: list[int]) -> np.ndarray:
        policy = load_policy(f"rlinf:{config}?{PLUGIN}", None)
        policy.model.proj.load_state_dict({"weight": torch.zeros(7, 8), "bias": torch.zeros(7)})
        return policy.act({**obs, "episode_seed": seeds})

    first, other = run([11, 12]), run([11, 13])
    np.testing.assert_array_equal(first[0], other[0])
    assert not np.allclose(first[1], other[1])


def test_given_weights_missing_a_key_then_a_checkpoint_error_names_the_key_and_the_file(tmp_path: Path) -> None:
    model = F.build(F.mlp_section())
    step = F.write_checkpoint(tmp_path / "run", model, drop="actor_mean.bias")
    config = F.write_run_config(tmp_path / "config.yaml", F.mlp_section())
    with pytest.raises(CheckpointError, match=r"missing keys actor_mean\.bias; unexpected keys none") as err:
        load_policy(f"rlinf:{config}", step)
    assert str(step / "actor" / "model_state_dict" / "full_weights.pt") in str(err.value)


def test_given_weights_with_an_extra_key_then_it_is_named(tmp_path: Path) -> None:
    state = F.build(F.mlp_section()).state_dict()
    state["value_head.0.weight"] = torch.zeros(1)
    weights = tmp_path / "full_weights.pt"
    torch.save(state, weights)
    config = F.write_model_config(tmp_path / "model.yaml", F.mlp_section())
    with pytest.raises(CheckpointError, match=r"unexpected keys value_head\.0\.weight"):
        load_policy(f"rlinf:{config}?weights={weights}", None)


def test_given_a_model_config_file_then_overrides_apply_and_no_weights_is_recorded(tmp_path: Path) -> None:
    config = F.write_model_config(tmp_path / "model.yaml", {"model": F.mlp_section()})
    described = load_policy(f"rlinf:{config}?precision=bf16", None).describe()
    assert described["config_kind"] == "model" and described["precision"] == "bf16"
    assert described["weights_file"] is None and described["weights_sha256"] is None
    # rlinf's mlp_policy ignores the precision: what ran is recorded next to what was asked
    assert described["param_dtype"] == "float32"


def test_given_models_that_return_the_wrong_shape_then_the_shapes_are_named(tmp_path: Path) -> None:
    config = F.write_run_config(tmp_path / "chunk.yaml", F.chunk_section(8, action_dim=6))
    policy = load_policy(f"rlinf:{config}?{PLUGIN}&batch=4", None)
    with pytest.raises(PolicyError, match=r"shape \(4, 8, 6\) for a forward pass of 4 rows; expected \(4, chunk, 7\)"):
        policy.act(make_obs(2))


@pytest.mark.parametrize(
    ("spec", "pattern"),
    [
        ("rlinf:{cfg}?device=cuda:0", r"device='cuda:0' is not there"),
        ("rlinf:{cfg}?device=gpu7", r"device='gpu7' is not a torch device"),
        ("rlinf:{cfg}?batch=-1", r"batch=-1 must be >= 0"),
        ("rlinf:{cfg}?temperature=0", r"unknown option 'temperature'"),
        ("rlinf:{cfg}?chunks=server", r"chunks='server'; use chunks=runner or chunks=policy"),
        ("rlinf:{cfg}?plugins=no_such_module_xyz", r"plugin module 'no_such_module_xyz' cannot be imported"),
        ("rlinf:{missing}", r"rlinf config .*missing\.yaml does not exist"),
    ],
)
def test_given_bad_options_then_the_error_names_them(tmp_path: Path, spec: str, pattern: str) -> None:
    config = F.write_model_config(tmp_path / "model.yaml", F.mlp_section())
    with pytest.raises(PolicyError, match=pattern):
        load_policy(spec.format(cfg=config, missing=tmp_path / "missing.yaml"), None)


@pytest.mark.parametrize(
    ("section", "pattern"),
    [
        ({"model_type": "mlp_policy", "precision": "fp32", "is_lora": False}, r"could not build .*Missing key obs_dim"),
        ({"model_type": "no_such_type"}, r"'no_such_type' is not registered in rlinf 0\.3\.0 .*mlp_policy"),
        ({"model_type": "openvla_oft", "model_path": "/nowhere"}, r"prismatic|transformers"),
        (
            {"model_type": "openpi", "model_path": "/nowhere"},
            r"needs the Python package 'openpi'.*install\.sh embodied",
        ),
        ({"not_a_model": 1}, r"has no model section"),
    ],
)
def test_given_configs_rlinf_cannot_build_then_rlinfs_error_and_the_fix_are_named(
    tmp_path: Path, section: dict[str, Any], pattern: str
) -> None:
    config = F.write_model_config(tmp_path / "model.yaml", section)
    with pytest.raises(PolicyError, match=pattern) as err:
        load_policy(f"rlinf:{config}", None)
    assert str(config) in str(err.value)


def test_given_rlinfs_own_libero_action_processing_then_the_gripper_types_match_it() -> None:
    from rlinf.config import SupportedModel
    from rlinf.envs.action_utils import prepare_actions_for_libero

    raw = np.zeros((1, 1, 7))
    raw[..., -1] = 0.9  # "open" in OpenVLA's [0, 1] convention
    mapped = {name for name in SupportedModel.models if prepare_actions_for_libero(raw.copy(), name)[0, 0, -1] != 0.9}
    assert mapped == set(OPENVLA_GRIPPER_TYPES)
    assert {"openpi", "mlp_policy", "cnn_policy"} <= MODE_EVAL_TYPES


def test_given_the_registry_then_rlinf_is_a_scheme() -> None:
    assert "rlinf" in valid_schemes()
