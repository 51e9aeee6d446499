"""The core's one Registry: registration, lookup and the "did you mean" error."""

from __future__ import annotations

import pickle

import pytest

from rlinf_bench.errors import ConfigError, UnknownNameError, UnknownSuiteError
from rlinf_bench.registry import Registry, unknown_name


def test_given_entries_when_looked_up_then_registry_returns_them_in_registration_order() -> None:
    registry: Registry[int] = Registry("thing")
    registry.register("b", value=2)
    registry.register("a", "alias")(1)
    assert registry.get("a") == registry.get("alias") == 1 and registry.names() == ["b", "a", "alias"]
    assert "b" in registry and len(registry) == 3 and list(registry) == ["b", "a", "alias"]
    assert Registry[int]("thing", sort=True).names() == []


def test_given_duplicate_name_then_register_raises() -> None:
    registry: Registry[int] = Registry("thing")
    registry.register("a", value=1)
    with pytest.raises(ValueError, match="thing 'a' is already registered"):
        registry.register("a", value=2)


def test_given_unknown_name_then_error_lists_valid_names_and_suggests_the_closest() -> None:
    registry: Registry[int] = Registry("suite", error=UnknownSuiteError, also=", or robotwin/<task>")
    registry.register("libero_goal", value=1)
    registry.register("libero_10", value=2)
    with pytest.raises(UnknownSuiteError) as info:
        registry.get("libero_gaol", context="request.json")
    err = info.value
    assert isinstance(err, UnknownNameError) and isinstance(err, ConfigError)
    assert str(err) == (
        "unknown suite 'libero_gaol' in 'request.json'; valid: libero_goal, libero_10, or robotwin/<task>."
        " Did you mean 'libero_goal'?"
    )
    assert (err.kind, err.name, err.valid, err.suggestion) == (
        "suite",
        "libero_gaol",
        ("libero_goal", "libero_10"),
        "libero_goal",
    )
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is UnknownSuiteError and copy.suggestion == "libero_goal" and str(copy) == str(err)


def test_given_nothing_close_then_error_has_no_suggestion() -> None:
    err = unknown_name("protocol", "zzz", ["oft", "rlinf"])
    assert str(err) == "unknown protocol 'zzz'; valid: oft, rlinf." and err.suggestion is None
