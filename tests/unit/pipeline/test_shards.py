"""Sharded suite-runs: the planner splits and balances, the aggregator merges, a lost shard is never a smaller run."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.state_aggregate import aggregate
from rlinf_aws.state_plan import eval_items, plan
from rlinf_bench.contracts import CheckpointRef, CheckpointReport, EvalRequest, RunResult, RunStatus, SuiteSelection
from rlinf_bench.contracts.layout import run_result_uri
from rlinf_bench.contracts.robustness import RobustnessSpec
from rlinf_bench.contracts.workflow import AggregateInput, OutcomeStatus, PlanInput, RunOutcome
from rlinf_bench.document_store import Storage
from rlinf_bench.sharding import auto_shard_count, balance, expand_shards, task_weights
from rlinf_k8s.dns_names import eval_job_name
from tests.unit.stats.runfactory import CKPT, make_run

SETTINGS = PipelineSettings(
    results_prefix="s3://b/results", eval_image="img@sha256:" + "a" * 64, probe_image="probe@sha256:" + "b" * 64
)


def _outcomes(run_index: int) -> dict[int, list[bool | int]]:
    return {t: [(t + run_index) % 2, 1, (t * run_index) % 3 == 0] for t in range(6)}


def _request(tmp_path: Path, shards: int | str) -> EvalRequest:
    return EvalRequest(
        checkpoint=CheckpointRef.model_validate(CKPT.model_dump()),
        suites=[SuiteSelection(name="libero_spatial", tasks=list(range(6)))],
        trials_per_task=3,
        output_prefix=str(tmp_path),
        baselines=[],
        probes=[],
        shards=shards,  # type: ignore[arg-type]
    )


def test_shards_1_plans_exactly_the_items_it_always_did() -> None:
    request = EvalRequest(checkpoint=CKPT, baselines=[], probes=[])
    out = plan(PlanInput(request=request, execution="ex"), SETTINGS)
    assert [(i.job_name, i.result_uri, i.shard, i.run.task_ids if i.run else 0) for i in out.eval_items] == [
        (eval_job_name("ex", r.suite, r.run_index), r.output_uri, None, None)
        for r in out.request.expand(out.result_root)
    ]


def test_each_suites_task_weights_are_computed_once_for_all_its_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from rlinf_bench import sharding

    weighed: list[str] = []
    real = sharding.task_weights

    def counting(selection: SuiteSelection, trials: int, robustness: RobustnessSpec | None = None) -> dict[int, int]:
        weighed.append(selection.name)
        return real(selection, trials, robustness)

    monkeypatch.setattr(sharding, "task_weights", counting)
    request = EvalRequest(checkpoint=CKPT, suites=["libero_10", "libero_goal"], baselines=[], probes=[], shards=2)
    shards = expand_shards(request, "s3://b/results/x")
    assert len(shards) == 2 * 3 * 2 and weighed == ["libero_10", "libero_goal"]


def test_a_run_split_in_3_shards_is_3_jobs_of_whole_tasks_with_their_own_names_and_files() -> None:
    request = EvalRequest(checkpoint=CKPT, suites=["libero_10"], runs=1, seeds=[0], baselines=[], probes=[], shards=3)
    items = plan(PlanInput(request=request, execution="ex"), SETTINGS).eval_items
    assert [i.label for i in items] == [f"libero_10 run 0 shard {k}/3" for k in (1, 2, 3)]
    tasks = [i.run.task_ids or [] for i in items if i.run]
    assert sorted(t for ts in tasks for t in ts) == list(range(10)) and sorted(map(len, tasks)) == [3, 3, 4]
    assert len({i.job_name for i in items}) == len({i.result_uri for i in items}) == 3
    assert all(i.result_uri.endswith(f"run0.shard{k}of3.json") for k, i in enumerate(items, 1))
    assert {i.shard.run_uri for i in items if i.shard} == {
        run_result_uri(items[0].result_uri.rsplit("/", 2)[0], "libero_10", 0)
    }


def test_lpt_balances_by_weight_heaviest_first() -> None:
    # 10 -> A, 9 -> B, 8 -> B (9 < 10), then the three 1s to A: loads 13 and 17, the LPT makespan.
    assert balance({0: 10, 1: 9, 2: 8, 3: 1, 4: 1, 5: 1}, 2) == [[0, 3, 4, 5], [1, 2]]
    assert balance({0: 5, 1: 5}, 4) == [[0], [1]]  # never an empty shard


def test_auto_splits_the_long_pole_from_measured_rates_and_target() -> None:
    long = task_weights(SuiteSelection(name="libero_10"), 50)
    short = task_weights(SuiteSelection(name="libero_spatial"), 50)
    assert auto_shard_count(long, workers=8, target_s=1200) == 2  # 500 x 530 steps / 174.9 steps/s ~ 1,515 s
    assert auto_shard_count(short, workers=8, target_s=1200) == 1
    assert auto_shard_count(long, workers=8, target_s=60) == 10  # at most one shard per task


def _write_shards(request: EvalRequest, root: str, skip: set[str] = frozenset()) -> list[RunOutcome]:  # type: ignore[assignment]
    """Each shard's file holds the full run's episodes of its tasks; ``skip``: shard labels that never report."""
    outcomes = []
    for shard in expand_shards(request, root):
        full = make_run(_outcomes(shard.run.run_index), run_index=shard.run.run_index)
        if shard.label in skip:
            continue
        part = full.with_tasks([t for t in full.tasks if t.task_id in (shard.run.task_ids or [])])
        assert shard.run.output_uri
        part.save(shard.run.output_uri)
        outcomes.append(
            RunOutcome(
                status=OutcomeStatus.SUCCEEDED,
                kind="eval",
                result_uri=shard.run.output_uri,
                suite=shard.run.suite,
                run_index=shard.run.run_index,
            )
        )
    return outcomes


def _aggregate(request: EvalRequest, root: str, outcomes: list[RunOutcome]) -> tuple[bool, list[str], CheckpointReport]:
    items = eval_items(request, root, "ex")  # the Plan state's items: the shards each run has
    out = aggregate(
        AggregateInput(request=request, eval_items=items, result_root=root, outcomes=[outcomes, []]), storage=Storage()
    )
    return out.complete, out.failed_runs, CheckpointReport.load(out.report_uri)


def test_the_aggregator_merges_shards_into_the_unsharded_runs_episode_for_episode(tmp_path: Path) -> None:
    request = _request(tmp_path, 3)
    root = str(tmp_path / "root")
    complete, failed, report = _aggregate(request, root, _write_shards(request, root))
    assert complete and failed == []
    for k in range(3):
        merged = RunResult.load(run_result_uri(root, "libero_spatial", k))
        assert merged.status == RunStatus.COMPLETE
        assert merged.tasks == make_run(_outcomes(k), run_index=k).tasks
    # The same report figures as the unsharded run's.
    flat = _request(tmp_path / "flat", 1)
    flat_root = str(tmp_path / "flat" / "root")
    ones = []
    for k in range(3):
        uri = run_result_uri(flat_root, "libero_spatial", k)
        make_run(_outcomes(k), run_index=k).save(uri)
        ones.append(
            RunOutcome(status=OutcomeStatus.SUCCEEDED, kind="eval", result_uri=uri, suite="libero_spatial", run_index=k)
        )
    _, _, unsharded = _aggregate(flat, flat_root, ones)
    assert report.suites[0].success_rate_mean == unsharded.suites[0].success_rate_mean
    assert [r.success_rate for r in report.suites[0].runs] == [r.success_rate for r in unsharded.suites[0].runs]


@pytest.mark.parametrize("how", ["never reported", "job failed"])
def test_a_lost_shard_leaves_its_run_incomplete_with_the_missing_tasks_named(tmp_path: Path, how: str) -> None:
    request = _request(tmp_path, 3)
    root = str(tmp_path / "root")
    lost = "libero_spatial run 1 shard 2/3"
    outcomes = _write_shards(request, root, skip={lost})
    shard = next(s for s in expand_shards(request, root) if s.label == lost)
    if how == "job failed":
        outcomes.append(
            RunOutcome(
                status=OutcomeStatus.FAILED,
                kind="eval",
                result_uri=shard.run.output_uri or "",
                suite="libero_spatial",
                run_index=1,
                error="OOMKilled",
            )
        )
    complete, failed, report = _aggregate(request, root, outcomes)
    assert not complete
    (line,) = failed
    assert line.startswith(lost) and ("OOMKilled" if how == "job failed" else "never reported") in line
    runs = report.suites[0].runs
    assert [(r.run_index, r.status.value) for r in runs] == [(0, "complete"), (1, "incomplete"), (2, "complete")]
    merged = RunResult.load(run_result_uri(root, "libero_spatial", 1))
    assert merged.status == RunStatus.INCOMPLETE and str(shard.run.task_ids) in (merged.error or "")
    assert {t.task_id for t in merged.tasks} == set(range(6)) - set(shard.run.task_ids or [])
    assert report.suites[0].runs_completed == 2


def test_jobs_submitted_without_the_workflow_refuse_a_sharded_request_naming_the_field() -> None:
    from rlinf_bench.errors import JobSpecError
    from rlinf_k8s.jobs import jobs_for_request

    request = EvalRequest(checkpoint=CKPT, suites=["libero_10"], baselines=[], probes=[], shards=2, image="img")
    with pytest.raises(JobSpecError, match=r"shards: 2 splits \['libero_10'\].*shards: 1"):
        jobs_for_request(request)
    assert len(jobs_for_request(request.model_copy(update={"shards": 1}))) == 3


def _write_shards_with(request: EvalRequest, root: str, change: dict[int, object]) -> list[RunOutcome]:
    """Run 0's shards, each written through ``change[shard index]`` (a RunResult -> RunResult function)."""
    outcomes = []
    for shard in expand_shards(request, root):
        full = make_run(_outcomes(shard.run.run_index), run_index=shard.run.run_index)
        part = full.with_tasks([t for t in full.tasks if t.task_id in (shard.run.task_ids or [])])
        fix = change.get(shard.index) if shard.run.run_index == 0 else None
        if fix is not None:
            part = fix(part)  # type: ignore[operator]
        assert shard.run.output_uri
        part.save(shard.run.output_uri)
        outcomes.append(
            RunOutcome(
                status=OutcomeStatus.SUCCEEDED,
                kind="eval",
                result_uri=shard.run.output_uri,
                suite=shard.run.suite,
                run_index=shard.run.run_index,
            )
        )
    return outcomes


def _other_steps(part: RunResult) -> RunResult:
    return part.model_copy(update={"max_steps": part.max_steps + 99})


def test_an_odd_first_shard_is_blamed_and_the_good_shards_are_kept(tmp_path: Path) -> None:
    request = _request(tmp_path, 3)
    root = str(tmp_path / "root")
    complete, failed, _ = _aggregate(request, root, _write_shards_with(request, root, {0: _other_steps}))
    assert not complete
    (line,) = failed  # one line, for the odd shard only
    assert line.startswith("libero_spatial run 0 shard 1/3: ")
    assert "does not match libero_spatial run 0 shard 2/3 (the settings 2 of the run's shards share)" in line
    assert "field max_steps differs" in line
    merged = RunResult.load(run_result_uri(root, "libero_spatial", 0))
    shards = expand_shards(request, root)
    assert merged.max_steps == make_run(_outcomes(0)).max_steps  # the majority's settings, not the first shard's
    assert {t.task_id for t in merged.tasks} == set(range(6)) - set(shards[0].run.task_ids or [])


def test_two_shards_that_disagree_are_both_refused_naming_each_other(tmp_path: Path) -> None:
    request = _request(tmp_path, 2)
    root = str(tmp_path / "root")
    _, failed, report = _aggregate(request, root, _write_shards_with(request, root, {1: _other_steps}))
    lines = [x for x in failed if x.startswith("libero_spatial run 0 shard")]
    assert len(lines) == 2 and all("no settings are shared by most of the run's shards" in x for x in lines)
    assert "shard 1/2: result" in lines[0] and "and libero_spatial run 0 shard 2/2 disagree" in lines[0]
    run0 = report.suites[0].runs[0]
    assert (run0.run_index, run0.status.value) == (0, "failed")


def test_a_complete_looking_shard_missing_a_task_adds_a_failure_line(tmp_path: Path) -> None:
    request = _request(tmp_path, 3)
    root = str(tmp_path / "root")

    def drop_a_task(part: RunResult) -> RunResult:
        return part.with_tasks(part.tasks[1:])  # still status complete

    shard = expand_shards(request, root)[1]
    lost = (shard.run.task_ids or [])[0]
    complete, failed, report = _aggregate(request, root, _write_shards_with(request, root, {1: drop_a_task}))
    assert not complete
    (line,) = failed
    assert line.startswith("libero_spatial run 0 shard 2/3 ")
    assert f"says it is complete but holds no episode of tasks [{lost}]" in line
    run0 = report.suites[0].runs[0]
    assert (run0.run_index, run0.status.value) == (0, "incomplete")
