"""Where rlinf is not installed (the main .venv), an ``rlinf:`` policy is refused with the way to get it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from eval_runner.policies.factory import load_policy
from rlinf_bench.errors import PolicyError

pytestmark = pytest.mark.skipif(importlib.util.find_spec("rlinf") is not None, reason="rlinf is installed here")


def test_given_no_rlinf_then_an_rlinf_policy_is_refused_naming_the_rlinf_venv(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("model:\n  model_type: mlp_policy\n")

    with pytest.raises(PolicyError, match=r"make setup-rlinf` and run \.venv-rlinf/bin/rlinf-bench"):
        load_policy(f"rlinf:{config}", None)
