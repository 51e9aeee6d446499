"""Robustness against the previous checkpoint: a paired verdict per axis and per published category, decided as
the SR verdicts are, and the headline flag when the standard SR rose while an axis fell decisively."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from scipy import stats as scipy_stats

from rlinf_bench.contracts import CheckpointReport, PerturbationAxis, RunResult, RunStatus, Verdict, VerdictValue
from rlinf_bench.stats.robustness import CategoryOf
from rlinf_bench.stats.verdicts import apply_verdicts
from tests.unit.stats.perturbedfactory import Perturbed, perturbed_run, report_of
from tests.unit.stats.runfactory import checkpoint

CAMERA, LIGHT = PerturbationAxis.CAMERA, PerturbationAxis.LIGHT
ALL = [1] * 10


def runs(step: int, control: Sequence[int], camera: Sequence[int], light: Sequence[int] = ALL) -> list[RunResult]:
    """One task, ten states, three runs alike: camera and light at level 1 on every state."""
    perturbed: Perturbed = {(CAMERA, 1): {0: list(camera)}, (LIGHT, 1): {0: list(light)}}
    return [perturbed_run({0: list(control)}, perturbed, run_index=i, ckpt=checkpoint(step)) for i in range(3)]


def compare(now: list[RunResult], before: list[RunResult], category_of: CategoryOf | None = None) -> CheckpointReport:
    return apply_verdicts(
        report_of(now, category_of=category_of), [], previous_report=report_of(before, category_of=category_of)
    )


def verdicts(report: CheckpointReport) -> dict[str, Verdict]:
    section = report.suites[0].robustness
    assert section is not None
    return {v.axis: v.verdict for v in section.verdicts}


def test_an_axis_that_fell_on_six_of_ten_states_is_below_by_the_paired_t_test_over_states() -> None:
    report = compare(runs(200, ALL, [0] * 6 + [1] * 4), runs(100, ALL, ALL))
    camera = verdicts(report)["camera"]
    # per state, now - before: -1 on six states, 0 on four
    t, p = scipy_stats.ttest_rel([0] * 6 + [1] * 4, [1] * 10, alternative="less")
    assert camera.value == VerdictValue.BELOW and camera.paired and camera.units == 10
    assert camera.statistic == pytest.approx(t) and camera.p_value == pytest.approx(p)
    assert camera.estimate == pytest.approx(0.4) and camera.reference == 1.0
    assert camera.difference == pytest.approx(-0.6) and camera.reference_label == "global_step 100"
    assert "under camera" in camera.test


def test_an_axis_that_did_not_move_on_a_small_budget_is_inconclusive_not_within() -> None:
    light = verdicts(compare(runs(200, ALL, ALL), runs(100, ALL, ALL)))["light"]
    assert light.value == VerdictValue.INCONCLUSIVE and light.reason.startswith("underpowered")


def test_the_flag_rises_when_the_standard_sr_rose_while_an_axis_fell_decisively() -> None:
    before = runs(100, [1] * 6 + [0] * 4, ALL)
    report = compare(runs(200, ALL, [0] * 6 + [1] * 4), before)
    flag = report.suites[0].robustness.flag  # type: ignore[union-attr]
    assert flag is not None
    assert flag.axes == ["camera"] and flag.against == "global_step 100" and flag.sr_suites == ["libero_spatial"]
    assert flag.sr_difference == pytest.approx(0.4) and flag.axis_differences["camera"] == pytest.approx(-0.6)
    sr = next(v for v in report.suites[0].verdicts if v.kind == "previous")
    assert flag.sr_verdict == sr.value


@pytest.mark.parametrize(
    ("control_before", "camera_now"),
    [
        ([1] * 10, [0] * 6 + [1] * 4),  # the axis fell but the standard SR did not rise
        ([1] * 6 + [0] * 4, [1] * 9 + [0]),  # the standard SR rose, the axis fell by one state: not decisive
    ],
)
def test_no_flag_unless_both_happened(control_before: list[int], camera_now: list[int]) -> None:
    report = compare(runs(200, ALL, camera_now), runs(100, control_before, ALL))
    assert report.suites[0].robustness.flag is None  # type: ignore[union-attr]


def test_cells_with_another_magnitude_are_not_paired_and_an_axis_with_none_alike_is_not_comparable() -> None:
    before = runs(100, ALL, ALL)
    for i, run in enumerate(before):
        task = run.tasks[0]
        moved = [
            e.model_copy(update={"perturbation": e.perturbation.model_copy(update={"magnitude": 7.5})})  # type: ignore[union-attr]
            if e.perturbation is not None and e.perturbation.axis == CAMERA
            else e
            for e in task.perturbed
        ]
        before[i] = run.with_tasks([task.model_copy(update={"perturbed": moved})])
    found = verdicts(compare(runs(200, ALL, ALL), before))
    assert found["camera"].value == VerdictValue.NOT_COMPARABLE
    assert "no camera cell was evaluated alike" in found["camera"].reason
    assert found["light"].value == VerdictValue.INCONCLUSIVE


def test_an_incomplete_previous_checkpoint_gives_incomplete_axis_verdicts() -> None:
    before = runs(100, ALL, ALL)
    before[2] = before[2].model_copy(update={"status": RunStatus.FAILED, "error": "OOMKilled"})
    found = verdicts(compare(runs(200, ALL, [0] * 10), before))
    assert {v.value for v in found.values()} == {VerdictValue.INCOMPLETE}
    assert "reference global_step 100 has 2 of 3 runs completed" in found["camera"].reason


def test_an_axis_run_only_now_gets_no_verdict() -> None:
    now = runs(200, ALL, ALL)
    before = [perturbed_run({0: ALL}, {(LIGHT, 1): {0: ALL}}, run_index=i, ckpt=checkpoint(100)) for i in range(3)]
    assert set(verdicts(compare(now, before))) == {"light"}


def test_a_published_category_gets_its_verdict_from_the_variants_of_that_category() -> None:
    published = {0: "camera", 1: "light"}

    def suite_runs(step: int, camera_task: Sequence[int]) -> list[RunResult]:
        return [perturbed_run({0: list(camera_task), 1: ALL}, {}, run_index=i, ckpt=checkpoint(step)) for i in range(3)]

    report = compare(
        suite_runs(200, [0] * 6 + [1] * 4), suite_runs(100, ALL), category_of=lambda s, t: published.get(t)
    )
    found = verdicts(report)
    assert found["camera"].value == VerdictValue.BELOW and found["camera"].units == 10
    assert found["light"].value == VerdictValue.INCONCLUSIVE
    assert "(perturbed episodes under camera)" in found["camera"].test


def test_a_published_suites_category_drop_is_flagged_against_the_checkpoints_standard_suite() -> None:
    published = {0: "camera"}

    def both(step: int, standard: Sequence[int], camera_task: Sequence[int]) -> list[RunResult]:
        made = []
        for i in range(3):
            made.append(perturbed_run({0: list(standard)}, {}, run_index=i, ckpt=checkpoint(step)))
            made.append(
                perturbed_run({0: list(camera_task)}, {}, run_index=i, ckpt=checkpoint(step), suite="libero_goal")
            )
        return made

    def category_of(suite: str, task: int) -> str | None:
        return published.get(task) if suite == "libero_goal" else None

    report = compare(both(200, ALL, [0] * 6 + [1] * 4), both(100, [1] * 6 + [0] * 4, ALL), category_of=category_of)
    goal = report.suite("libero_goal")
    assert goal is not None and goal.robustness is not None and goal.robustness.flag is not None
    assert goal.robustness.flag.sr_suites == ["libero_spatial"] and goal.robustness.flag.axes == ["camera"]
    assert report.suite("libero_spatial").robustness is None  # type: ignore[union-attr]
