"""Naming rules: derived names are valid, short and stable; user-chosen names are checked, not rewritten."""

from __future__ import annotations

import re

import pytest

from rlinf_bench.errors import JobSpecError
from rlinf_k8s.container import expand_var_refs
from rlinf_k8s.dns_names import (
    derive_name,
    sanitize_label_value,
    validate_dns1123_label,
    validate_label_key,
    validate_label_value,
)

DNS_LABEL = re.compile(r"^[a-z][-a-z0-9]{0,61}[a-z0-9]$")


@pytest.mark.parametrize(
    "parts",
    [
        ("eval", "exp-s100-abc", "libero_spatial", "r0"),
        ("eval", "A" * 200, "libero_90", "r2"),
        ("probe", "exp--weird__name..", "checkpoint_io"),
        ("eval", "x" * 54 + "-" * 20 + "y"),
    ],
)
def test_given_any_parts_then_the_derived_name_is_a_dns_label_and_stable(parts: tuple[str, ...]) -> None:
    name = derive_name(*parts)

    assert DNS_LABEL.match(name), name
    assert derive_name(*parts) == name


def test_given_long_names_sharing_a_prefix_then_the_hash_suffix_keeps_them_apart() -> None:
    a = derive_name("eval", "e" * 80, "libero_10", "r0")
    b = derive_name("eval", "e" * 80, "libero_10", "r1")

    assert a != b
    assert len(a) == len(b) == 63


def test_given_room_for_an_index_then_max_len_is_honoured() -> None:
    assert len(derive_name("probe", "p" * 100, "nccl", max_len=61)) <= 61


def test_given_no_usable_characters_then_a_clear_error() -> None:
    with pytest.raises(JobSpecError, match="cannot derive"):
        derive_name("___", "...")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("libero_10", "libero_10"), ("100", "100"), ("", "")],
)
def test_given_valid_label_values_then_sanitize_keeps_them(raw: str, expected: str) -> None:
    assert sanitize_label_value(raw) == expected


@pytest.mark.parametrize("raw", ["my exp/run 1", "-lead", "x" * 100, "ünïcode", "a" * 63 + "!"])
def test_given_invalid_label_values_then_sanitize_makes_them_valid_and_distinct(raw: str) -> None:
    value = sanitize_label_value(raw)

    assert validate_label_value(value, field="v") == value
    assert value != sanitize_label_value(raw + "2")


@pytest.mark.parametrize("bad", ["UPPER", "with_underscore", "-lead", "trail-", "a" * 64, "dot.ted"])
def test_given_user_chosen_names_that_kubernetes_rejects_then_they_are_refused(bad: str) -> None:
    with pytest.raises(JobSpecError, match="not a valid Kubernetes name"):
        validate_dns1123_label(bad, field="kubernetes.namespace")


@pytest.mark.parametrize("key", ["role", "node.kubernetes.io/instance-type", "nvidia.com/gpu"])
def test_given_valid_label_keys_then_accepted(key: str) -> None:
    assert validate_label_key(key, field="f") == key


@pytest.mark.parametrize("key", ["", "/x", "Bad_Prefix/x", "a/b/c", "x" * 64])
def test_given_invalid_label_keys_then_refused(key: str) -> None:
    with pytest.raises(JobSpecError, match="label key"):
        validate_label_key(key, field="f")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$(A)", "1"),
        ("$$(A)", "$(A)"),
        ("$$$(A)", "$1"),
        ("$(UNKNOWN)", "$(UNKNOWN)"),
        ("$(A", "$(A"),
        ("cost $5 $", "cost $5 $"),
        ("$(A)-$(B)", "1-two"),
    ],
)
def test_given_kubernetes_var_syntax_then_local_expansion_matches_the_kubelet(text: str, expected: str) -> None:
    env = {"A": "1", "B": "two"}
    assert expand_var_refs(text, env.get) == expected
