"""The spec grammar and the registries: what a user sees when a spec is wrong."""

from __future__ import annotations

import pytest

from eval_runner.policies.builtin import RandomPolicy, ZeroPolicy
from eval_runner.policies.factory import Registry, load_policy, valid_schemes
from eval_runner.policies.spec import parse_spec
from rlinf_bench.errors import PolicyError


def test_given_options_when_parsed_then_values_are_typed() -> None:
    spec = parse_spec("builtin:demo?cameras=agentview&resolution=128&scale=0.5&flag=true")
    assert (spec.scheme, spec.target) == ("builtin", "demo")
    assert spec.options == {"cameras": "agentview", "resolution": 128, "scale": 0.5, "flag": True}


def test_given_server_url_when_parsed_then_url_keeps_its_colons() -> None:
    spec = parse_spec("server:ws://10.0.0.5:8000/policy?retries=2")
    assert spec.target == "ws://10.0.0.5:8000/policy"
    assert spec.options == {"retries": 2}


@pytest.mark.parametrize("raw", ["zero", "builtin:", ":zero", ""])
def test_given_spec_without_scheme_or_target_then_error_shows_the_form(raw: str) -> None:
    with pytest.raises(PolicyError, match="SCHEME:TARGET"):
        parse_spec(raw)


def test_given_option_twice_then_error_names_it() -> None:
    with pytest.raises(PolicyError, match="'seed' is given twice"):
        parse_spec("builtin:random?seed=1&seed=2")


def test_given_unknown_scheme_then_error_lists_valid_schemes_and_suggests() -> None:
    with pytest.raises(PolicyError) as exc:
        load_policy("bultin:zero", None)
    message = str(exc.value)
    assert "unknown policy scheme 'bultin'" in message
    for scheme in ("builtin", "python", "server"):
        assert scheme in message
    assert "Did you mean 'builtin'?" in message
    assert valid_schemes() == ["builtin", "openpi", "python", "rlinf", "server"]


def test_given_unknown_builtin_then_error_suggests_closest_name() -> None:
    with pytest.raises(PolicyError, match="Did you mean 'random'"):
        load_policy("builtin:randm", None)


def test_given_unknown_option_then_error_lists_valid_options() -> None:
    with pytest.raises(PolicyError, match="unknown option 'sed'; valid options: scale, seed"):
        load_policy("builtin:random?sed=3", None)


def test_given_option_of_wrong_type_then_error_names_type() -> None:
    with pytest.raises(PolicyError, match="seed='abc' must be of type int"):
        load_policy("builtin:random?seed=abc", None)


def test_given_zero_with_an_unknown_option_then_it_refuses_it() -> None:
    with pytest.raises(PolicyError, match=r"unknown option 'seed'; valid options: cameras, resolution"):
        load_policy("builtin:zero?seed=1", None)


def test_given_zero_with_cameras_then_it_asks_for_them_and_still_returns_the_settle_action() -> None:
    policy = load_policy("builtin:zero?cameras=agentview,robot0_eye_in_hand&resolution=256", None)
    assert policy.obs_spec.cameras == ("agentview", "robot0_eye_in_hand") and policy.obs_spec.resolution == 256
    assert policy.act({"episode_id": ["a", "b"]}).tolist() == [[0, 0, 0, 0, 0, 0, -1]] * 2


def test_given_valid_specs_then_registry_builds_the_named_policies() -> None:
    assert isinstance(load_policy("builtin:zero", None), ZeroPolicy)
    random_policy = load_policy(" builtin:random?seed=3&scale=0.5 ", None)
    assert isinstance(random_policy, RandomPolicy)
    assert (random_policy.seed, random_policy.scale) == (3, 0.5)


def test_given_duplicate_registration_then_registry_raises() -> None:
    registry: Registry[int] = Registry("thing")
    registry.register("a", "alias")(1)
    with pytest.raises(ValueError, match="'alias' is already registered"):
        registry.register("alias")(2)
    assert registry.get("a") == 1 and "alias" in registry and list(registry) == ["a", "alias"]
    with pytest.raises(PolicyError, match="unknown thing 'b'; valid: a, alias"):
        registry.get("b")
