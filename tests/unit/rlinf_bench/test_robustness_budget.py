"""What a robustness profile costs, as docs/robustness.md states it, and that sharding and estimates count it."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from eval_runner.run_estimate import estimate_run
from rlinf_bench.contracts import EvalRun
from rlinf_bench.contracts.request import EvalMatrix, EvalRequest, SuiteSelection
from rlinf_bench.contracts.robustness import AXES, RobustnessSpec
from rlinf_bench.robustness import AXIS_SCALES, matrix_budget, perturbation_record, perturbed_episodes
from rlinf_bench.sharding import task_weights

DOC = Path(__file__).parents[3] / "docs" / "robustness.md"
CHECKPOINT = {"uri": "s3://b/exp/checkpoints/global_step_10", "experiment": "exp", "global_step": 10}


def _section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def _table_rows(section: str) -> list[list[str]]:
    """The rows of the section's first table, without its header."""
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| "))
    table = [line for line in itertools.takewhile(lambda line: line.startswith("|"), lines[start:])]
    rows = [line.strip().strip("|").split("|") for line in table if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows[1:]]


def _number(cell: str) -> int:
    return int(re.search(r"[\d,]+", cell).group().replace(",", ""))  # type: ignore[union-attr]


@pytest.mark.parametrize("profile", ["quick", "full"])
def test_given_a_profile_then_its_episodes_are_what_the_docs_state(profile: str) -> None:
    rows = {row[0].strip("`"): row for row in _table_rows(_section("The budget"))}
    _, _, _, per_task_at_50, default_matrix = rows[profile]

    budget = matrix_budget(EvalMatrix(robustness=profile))
    spec = RobustnessSpec.model_validate(profile)

    assert spec.episodes_per_task(50) == _number(per_task_at_50)
    assert budget.perturbed == _number(default_matrix)
    assert budget.standard == 6000  # the table's header: 4 suites, 40 tasks, 50 trials, 3 runs
    share = re.search(r"\+(\d+) %", per_task_at_50)
    assert share is not None and round(100 * budget.perturbed / budget.standard) == int(share.group(1))
    assert f"+{budget.perturbed:,} perturbed episodes" in budget.line()


def test_given_the_default_matrix_then_robustness_is_off_and_costs_nothing() -> None:
    budget = matrix_budget(EvalMatrix())
    assert budget.spec is None and budget.perturbed == 0
    assert budget.line() == "robustness off: 6,000 standard episodes"


def test_given_the_axes_table_then_it_lists_every_axis_with_the_magnitudes_and_units_the_code_applies() -> None:
    rows = _table_rows(_section("Axes and levels"))

    assert [row[0].strip("`") for row in rows] == [axis.value for axis in AXES]
    for row in rows:
        scale = AXIS_SCALES[row[0].strip("`")]  # type: ignore[index]
        for level, cell in enumerate(row[1:4], start=1):
            number, unit = cell.split(" ", 1)
            assert (float(number), unit) == (scale.magnitude(level), scale.unit), row[0]
        assert row[4].startswith(scale.measures.split(":")[0])


def test_given_a_level_then_its_record_has_the_magnitude_and_unit_and_level_zero_has_none() -> None:
    for axis in AXES:
        assert perturbation_record(axis, 0).magnitude == 0.0
        record = perturbation_record(axis, 3, {"x": 1.0})
        assert (record.magnitude, record.unit, record.params) == (
            AXIS_SCALES[axis].magnitudes[2],
            AXIS_SCALES[axis].unit,
            {"x": 1.0},
        )
    with pytest.raises(ValueError, match="level 4"):
        perturbation_record(AXES[0], 4)


def test_given_robustness_then_a_task_weighs_its_perturbed_episodes_in_sharding_and_the_estimate() -> None:
    selection = SuiteSelection(name="libero_spatial", tasks=[0, 1])
    quick = RobustnessSpec.model_validate("quick")

    plain = task_weights(selection, 50)
    weighted = task_weights(selection, 50, quick)
    assert {t: weighted[t] * 50 for t in weighted} == {t: plain[t] * 55 for t in plain}  # 5 more episodes per task

    run = EvalRun.model_validate(
        {
            "request_id": "r",
            "checkpoint": CHECKPOINT,
            "suite": "libero_spatial",
            "run_index": 0,
            "seed": 0,
            "task_ids": [0, 1],
            "trials_per_task": 50,
            "robustness": "full",
        }
    )
    estimate = estimate_run(run)
    assert estimate is not None
    assert estimate.episodes == 100 + perturbed_episodes(run.robustness, 2, 50) == 100 + 2 * 105


def test_given_a_request_with_robustness_then_each_shard_plays_its_tasks_perturbed_episodes() -> None:
    from rlinf_bench.sharding import expand_shards

    request = EvalRequest(
        checkpoint=CHECKPOINT, suites=[{"name": "libero_spatial"}], runs=1, shards=2, robustness="quick"
    )
    shards = expand_shards(request)
    tasks = sorted(t for shard in shards for t in shard.run.task_ids)
    assert tasks == list(range(10)) and all(shard.run.robustness == request.robustness for shard in shards)


def test_given_automatic_shards_then_a_run_with_perturbed_episodes_gets_more_of_them() -> None:
    from rlinf_bench.sharding import shard_count

    selection = SuiteSelection(name="libero_10")
    plain = EvalRequest(checkpoint=CHECKPOINT, suites=[selection], shards="auto", workers=8)
    full = plain.model_copy(update={"robustness": RobustnessSpec.model_validate("full")})
    assert shard_count(full, selection) > shard_count(plain, selection) >= 1
