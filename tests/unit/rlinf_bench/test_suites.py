"""The suite registry: names, counts, horizons and LIBERO's task list, without importing LIBERO."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rlinf_bench.errors import ConfigError, UnknownSuiteError
from rlinf_bench.suites import SUITES, get_suite, language_of, resolve_task_ids


def test_given_the_registry_then_it_has_the_five_libero_suites_with_openvla_oft_horizons() -> None:
    libero = {n: s for n, s in SUITES.items() if s.simulator == "libero"}  # RoboTwin's: tests/robotwin
    assert {n: (s.n_tasks, s.max_steps, s.init_states) for n, s in libero.items()} == {
        "libero_spatial": (10, 220, 50),
        "libero_object": (10, 280, 50),
        "libero_goal": (10, 300, 50),
        "libero_10": (10, 520, 50),
        "libero_90": (90, 400, 50),
    }
    assert all(s.settle_steps == 10 for s in libero.values())


def test_given_a_misspelt_suite_when_looked_up_then_the_error_lists_valid_names_and_suggests_one() -> None:
    with pytest.raises(
        UnknownSuiteError, match=r"unknown suite .*; valid: libero_spatial, .*Did you mean 'libero_spatial'\?"
    ):
        get_suite("libero_spatal")


def test_given_task_ids_out_of_range_when_resolved_then_the_error_names_the_valid_range() -> None:
    with pytest.raises(ConfigError, match=r"\[10\] out of range for suite libero_goal: valid ids are 0..9"):
        resolve_task_ids(get_suite("libero_goal"), [3, 10])
    with pytest.raises(ConfigError, match="empty task list"):
        resolve_task_ids(get_suite("libero_goal"), [])
    assert resolve_task_ids(get_suite("libero_goal"), [5, 0, 5]) == [0, 5]
    assert resolve_task_ids(get_suite("libero_90"), None) == list(range(90))


def test_given_installed_libero_then_task_counts_match_and_files_exist() -> None:
    for suite in (s for s in SUITES.values() if s.simulator == "libero"):
        tasks = suite.tasks()
        assert len(tasks) == suite.n_tasks, suite.name
        assert all(t.bddl_file.is_file() and t.init_states_file.is_file() for t in tasks), suite.name
    assert get_suite("libero_10").task(0).language == "put both the alphabet soup and the tomato sauce in the basket"


def test_given_libero_100_style_names_then_the_scene_prefix_is_dropped_from_the_language() -> None:
    assert language_of("KITCHEN_SCENE10_put_the_butter_at_the_back") == "put the butter at the back"
    assert language_of("LIVING_ROOM_SCENE2_stack_the_boxes") == "stack the boxes"
    assert language_of("open_the_top_drawer") == "open the top drawer"


def test_given_a_fresh_interpreter_when_suites_are_read_then_neither_libero_nor_torch_is_imported() -> None:
    code = (
        "import sys; from rlinf_bench.suites import get_suite; get_suite('libero_spatial').tasks();"
        "print(sorted(m for m in ('libero.libero', 'torch', 'robosuite') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
