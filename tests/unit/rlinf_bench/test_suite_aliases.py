"""The brief's spellings of a suite ("LIBERO-Long", "LIBERO-Spatial", "RoboTwin 2.0") mean its id wherever a
suite name is read: the registry, the eval matrix of a config, one eval run, and ``evaluate --suite``."""

from __future__ import annotations

import pytest

from rlinf_bench.contracts import CheckpointRef, EvalRun
from rlinf_bench.contracts.request import EvalMatrix
from rlinf_bench.errors import UnknownSuiteError
from rlinf_bench.suites import SUITES, get_suite

#: Every suite spelling of the brief (seed/rlinf-benchmarking-skill.txt) and of other harnesses -> the id.
SPELLINGS = {
    "LIBERO-Long": "libero_10",
    "libero_long": "libero_10",
    "LIBERO-10": "libero_10",
    "LIBERO-Spatial": "libero_spatial",
    "LIBERO-Object": "libero_object",
    "LIBERO-Goal": "libero_goal",
    "LIBERO-90": "libero_90",
    "RoboTwin 2.0": "robotwin",
    "RoboTwin": "robotwin",
    "robotwin_Extra-Long": "robotwin_extra_long",
    "robotwin_long+xl": "robotwin_long_xl",
    # The published robustness suites, as their papers and RLinf write them.
    "LIBERO-plus Spatial": "liberoplus_spatial",
    "libero_plus_long": "liberoplus_10",
    "LIBERO-Plus-10": "liberoplus_10",
    "libero_pro_goal_lan": "liberopro_goal_language",
    "LIBERO-PRO object swap": "liberopro_object_position",
    "libero_pro_10_semantic": "liberopro_10_language",
    "liberopro_spatial_env": "liberopro_spatial_environment",
}


@pytest.mark.parametrize(("given", "suite"), SPELLINGS.items())
def test_given_a_spelling_of_the_brief_then_the_registry_returns_its_suite(given: str, suite: str) -> None:
    assert get_suite(given).name == suite


@pytest.mark.parametrize(("given", "suite"), SPELLINGS.items())
def test_given_a_spelling_in_an_eval_matrix_or_run_then_the_contract_carries_the_id(given: str, suite: str) -> None:
    assert EvalMatrix.model_validate({"suites": [given]}).suites[0].name == suite
    checkpoint = CheckpointRef(uri="/runs/exp/checkpoints/global_step_1", experiment="exp", global_step=1)
    run = EvalRun(request_id="r", checkpoint=checkpoint, suite=given, run_index=0, seed=0)
    assert run.suite == suite and run.run_id == f"r-{suite}-r0"  # result folders use the id too


def test_given_libero_long_misspelt_then_the_suggestion_is_libero_long_not_libero_goal() -> None:
    with pytest.raises(UnknownSuiteError, match=r"in 'LIBERO-Lnog'.*libero_long.*Did you mean 'libero_long'\?"):
        get_suite("LIBERO-Lnog")


def test_given_the_aliases_then_the_registry_lists_only_ids() -> None:
    assert "libero_long" not in SUITES.names() and "libero_10" in SUITES.names()
