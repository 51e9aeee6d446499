"""Task registry, instructions and the horizon mapping, checked against the installed runtime's files."""

from __future__ import annotations

import itertools
import json
from importlib import resources

import pytest

pytest.importorskip("robotwin", reason="needs the RoboTwin runtime: runs in .venv-robotwin (make test-robotwin)")

from eval_runner.envs.robotwin_tasks import runtime_step_limits, runtime_task_names, suite_tasks, task_info
from rlinf_bench import robotwin as facts
from rlinf_bench.baselines import get_baseline
from rlinf_bench.errors import SimulatorError, UnknownSuiteError
from rlinf_bench.suites import get_suite


def test_given_the_runtime_then_its_50_task_envs_are_the_registry() -> None:
    names = runtime_task_names()
    assert len(names) == 50
    assert {"lift_pot", "beat_block_hammer", "blocks_ranking_rgb", "put_bottles_dustbin"} <= set(names)
    assert "vector_env" not in names and "reward" not in names


def test_given_our_task_table_then_it_equals_the_runtimes_step_limit_config() -> None:
    # rlinf_bench/data/robotwin/tasks.yaml is what the main venv and Lambdas validate with.
    assert {t: facts.step_limit(t) for t in facts.task_names()} == runtime_step_limits()
    assert set(runtime_step_limits()) == set(runtime_task_names())


def test_given_a_task_then_its_instructions_come_from_the_runtimes_description_file() -> None:
    task = task_info("robotwin/lift_pot", 0, "lift_pot")
    raw = json.loads(
        resources.files("robotwin.description").joinpath("task_instruction", "lift_pot.json").read_text("utf-8")
    )
    assert task.language == raw["full_description"]
    assert task.seen_instructions == tuple(raw["seen"]) and task.unseen_instructions == tuple(raw["unseen"])
    assert all("{A}" in s for s in task.seen_instructions)  # templates: the scene fills in the object
    assert task.step_limit == 400


def test_given_every_runtime_task_then_each_has_instructions() -> None:
    for name in runtime_task_names():
        task = task_info(f"robotwin/{name}", 0, name)
        assert task.language and task.seen_instructions, name


def test_given_group_suites_then_tasks_are_ordered_and_step_limits_read_from_the_runtime() -> None:
    tasks = suite_tasks("robotwin_long_xl")
    assert [(t.task_id, t.name, t.step_limit) for t in tasks] == [
        (0, "handover_block", 800),
        (1, "stack_bowls_two", 900),
        (2, "blocks_ranking_rgb", 1200),
        (3, "put_bottles_dustbin", 1700),
    ]
    assert get_suite("robotwin_long_xl").max_steps == 1700
    assert len(suite_tasks("robotwin")) == 12


def test_given_an_unknown_task_then_the_error_suggests_the_runtime_name() -> None:
    with pytest.raises(UnknownSuiteError, match="Did you mean 'blocks_ranking_rgb'"):
        suite_tasks("robotwin/blocks_rank_rgb")
    with pytest.raises(SimulatorError, match="no task 'nope'"):
        task_info("x", 0, "nope")


# ---- horizon mapping (rlinf_bench/data/baselines/robotwin.yaml) against the runtime ----


def test_given_every_grouped_task_then_the_runtime_has_its_env_instructions_and_step_limit() -> None:
    limits = runtime_step_limits()
    for group in facts.horizon_groups().values():
        for task, steps in group.tasks.items():
            assert task in runtime_task_names(), f"{group.name}: {task} is not a runtime task"
            lo, hi = group.steps
            assert lo <= steps <= hi, f"{task}: {steps} expert steps outside the {group.name} range {group.steps}"
            # The expert's trajectory must fit in the runtime's limit, or success within it is impossible.
            assert steps < limits[task], f"{task}: {steps} expert steps but the runtime stops at {limits[task]}"


def test_given_the_groups_then_longer_horizons_never_get_a_shorter_step_limit() -> None:
    limits = runtime_step_limits()
    groups = list(facts.horizon_groups().values())
    for shorter, longer in itertools.pairwise(groups):
        most = max(limits[t] for t in shorter.tasks)
        least = min(limits[t] for t in longer.tasks)
        assert most <= least, f"{shorter.name} allows {most} steps but {longer.name} only {least}"


def test_given_the_briefs_examples_then_they_sit_in_the_briefs_groups() -> None:
    # The brief's table: short lift_pot, beat_block_hammer; medium move_can_pot, handover_mic; long
    # handover_block, stack_bowls_two; extra-long blocks_rank_rgb (the runtime's blocks_ranking_rgb),
    # put_bottles_dustbin. 4 + 4 + 2 + 2 tasks.
    expected = {
        "short": {"lift_pot", "beat_block_hammer"},
        "medium": {"move_can_pot", "handover_mic"},
        "long": {"handover_block", "stack_bowls_two"},
        "extra_long": {"blocks_ranking_rgb", "put_bottles_dustbin"},
    }
    groups = facts.horizon_groups()
    assert {g: len(v.tasks) for g, v in groups.items()} == {"short": 4, "medium": 4, "long": 2, "extra_long": 2}
    for name, examples in expected.items():
        assert examples <= set(groups[name].tasks), name
    # Flagged mismatch: the brief's (and paper's) name is not a runtime task; the mapping uses the runtime's.
    assert "blocks_rank_rgb" not in runtime_task_names()


def test_given_the_per_task_baselines_then_their_group_means_are_the_briefs_group_table() -> None:
    # Cross-checks the grouping with the published numbers: each of the brief's group columns is the mean
    # of the per-task table over exactly the tasks we put in that group.
    columns = facts.horizon_columns()
    groups = facts.horizon_groups()
    for per_task, per_group in (
        ("robotwin-tasks/simplevla-openvla-oft-sft", "robotwin/openvla-oft-sft"),
        ("robotwin-tasks/simplevla-rl", "robotwin/rlinf"),
    ):
        values = get_baseline(per_task).values
        published = get_baseline(per_group)
        for column, members in columns.items():
            tasks = [t for m in members for t in groups[m].tasks]
            mean = sum(values[t] for t in tasks) / len(tasks)
            assert mean == pytest.approx(published.values[column], abs=0.051), (
                per_task,
                column,
            )  # printed to 1 decimal
        assert sum(values.values()) / len(values) == pytest.approx(published.average, abs=0.051)
