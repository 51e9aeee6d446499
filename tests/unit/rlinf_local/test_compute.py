"""The embedded default picks its compute backend: its local executor, or a cluster through rlinf_k8s."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlinf_bench.errors import ConfigError
from rlinf_local.compute import DEFAULT_LOCAL_DIR, submitter_for
from rlinf_local.local_executor import LocalExecutor


def test_given_local_with_a_dir_and_parallelism_then_a_local_executor(tmp_path: Path) -> None:
    sub = submitter_for(f"local:{tmp_path}?parallel=3")

    assert isinstance(sub, LocalExecutor)
    assert sub.workdir == tmp_path


def test_given_local_alone_then_the_default_folder() -> None:
    sub = submitter_for("local")

    assert isinstance(sub, LocalExecutor) and sub.workdir == DEFAULT_LOCAL_DIR


def test_given_a_cluster_then_the_choice_is_rlinf_k8s_s() -> None:
    with pytest.raises(ConfigError, match="names no cluster; use eks:CLUSTER"):
        submitter_for("eks:")


def test_given_a_parallelism_that_is_no_number_then_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="parallel must be an integer"):
        submitter_for("local:/x?parallel=two")
