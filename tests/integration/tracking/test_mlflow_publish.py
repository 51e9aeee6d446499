"""Publishing to a real MLflow store (sqlite) and reading it back, as the brief's query does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rlinf_bench.baselines import get_baselines
from rlinf_bench.contracts import CheckpointReport, RunStatus, VerdictValue
from rlinf_bench.errors import TrackingUnavailableError
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from rlinf_bench.stats.verdicts import apply_verdicts
from rlinf_tracking import RetryPolicy, load_history, publish_checkpoint
from tests.unit.stats.runfactory import checkpoint, heterogeneous_runs, make_run

BASELINES = get_baselines(["libero/openvla-oft-sft", "libero/openvla-oft-rlinf"])
STEPS = (100, 200, 300)


def _report(step: int, rng: np.random.Generator, rates: np.ndarray) -> CheckpointReport:
    runs = heterogeneous_runs(rng, rates, ckpt=checkpoint(step))
    return aggregate_checkpoint([SourcedRun(f"s{step}-run{r.run_index}.json", r) for r in runs])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One sqlite store for the module (creating one runs migrations: seconds); three checkpoints published
    the way the pipeline does: read history from MLflow, decide verdicts, publish."""
    from mlflow.tracking import MlflowClient

    root = tmp_path_factory.mktemp("mlflow")
    client = MlflowClient(f"sqlite:///{root}/mlflow.db")
    client.create_experiment("RLinf", artifact_location=str(root / "artifacts"))
    rng = np.random.default_rng(21)
    rates = rng.beta(3, 0.5, size=(3, 20))
    run_ids = {}
    for i, step in enumerate(STEPS):
        # The middle checkpoint regresses hard, so "previous" and "best" differ for the last one.
        report = _report(step, rng, np.clip(rates - (0.4 if i == 1 else 0.0), 0, 1))
        history = load_history(client, "RLinf")
        apply_verdicts(report, BASELINES, history)
        run_ids[step] = publish_checkpoint(
            report, client=client, out_dir=root / f"out{step}", history=history, baselines=BASELINES
        )
    yield {"client": client, "root": root, "run_ids": run_ids}


def test_given_published_checkpoints_then_the_briefs_query_finds_parents_with_success_rate(store: dict) -> None:
    client = store["client"]
    experiment = client.get_experiment_by_name("RLinf")
    runs = client.search_runs(experiment_ids=[experiment.experiment_id], filter_string="params.val_only = 'True'")
    assert sorted(r.info.run_id for r in runs) == sorted(store["run_ids"].values())
    for run in runs:
        assert 0.0 <= run.data.metrics["success_rate"] <= 1.0
        assert run.data.params["task_suite_name"] == "libero_spatial"
        assert run.data.params["runs"] == "3" and run.data.params["seeds"] == "0,1,2"
        assert run.data.params["trials"] == "20"
        assert run.data.params["checkpoint"].endswith(f"global_step_{run.data.params['global_step']}")
        for key in (
            "success_rate/libero_spatial",
            "ci95_low/libero_spatial",
            "wilson95_high/libero_spatial",
            "success_rate_std/libero_spatial",
            "success_rate/libero_spatial/task_0",
        ):
            assert key in run.data.metrics, key


def test_given_a_parent_then_one_child_per_eval_run_without_val_only(store: dict) -> None:
    client = store["client"]
    exp = client.get_experiment_by_name("RLinf")
    pid = store["run_ids"][300]
    children = client.search_runs([exp.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{pid}'")
    assert sorted(c.data.params["run_index"] for c in children) == ["0", "1", "2"]
    assert all("val_only" not in c.data.params and "success_rate" in c.data.metrics for c in children)


def test_given_a_parent_then_report_markdown_and_a_valid_png_are_artifacts(store: dict, tmp_path: Path) -> None:
    import matplotlib.image

    client = store["client"]
    pid = store["run_ids"][300]
    names = {a.path for a in client.list_artifacts(pid)}
    assert names == {"checkpoint_report.json", "report.md", "sr_vs_step.png"}
    png = Path(client.download_artifacts(pid, "sr_vs_step.png", str(tmp_path)))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = matplotlib.image.imread(png)
    assert pixels.shape[0] > 300 and pixels.std() > 0.05  # a drawn chart, not a blank canvas
    report = CheckpointReport.load(client.download_artifacts(pid, "checkpoint_report.json", str(tmp_path)))
    assert report.links["mlflow_run"] == pid and report.suites[0].states


def test_given_history_in_mlflow_then_previous_and_best_verdicts_are_paired_and_tagged(store: dict) -> None:
    client = store["client"]
    run = client.get_run(store["run_ids"][300])
    report = CheckpointReport.from_json(
        Path(client.download_artifacts(run.info.run_id, "checkpoint_report.json")).read_text()
    )
    by_kind = {v.kind: v for v in report.verdicts if v.kind != "baseline"}
    assert by_kind["previous"].reference_label == "global_step 200" and by_kind["previous"].paired
    assert by_kind["previous"].value == VerdictValue.ABOVE  # recovered from the regression
    assert by_kind["best"].reference_label == "global_step 100"
    assert run.data.tags["verdict/libero_spatial/previous"] == "above"
    # The stored runs cover 3 of libero_spatial's 10 tasks: no verdict against the whole-suite paper number.
    assert run.data.tags["verdict/libero_spatial/libero/openvla-oft-rlinf"] == "incomplete"


def test_given_the_same_checkpoint_published_twice_then_it_replaces_the_first(store: dict, tmp_path: Path) -> None:
    client = store["client"]
    old_id = store["run_ids"][300]
    rng = np.random.default_rng(5)
    again = _report(300, rng, np.full((3, 20), 0.9))
    new_id = publish_checkpoint(again, client=client, out_dir=tmp_path, baselines=BASELINES)
    exp = client.get_experiment_by_name("RLinf")
    runs = client.search_runs(
        [exp.experiment_id], filter_string="params.val_only = 'True' and params.global_step = '300'"
    )
    assert [r.info.run_id for r in runs] == [new_id]
    orphans = client.search_runs([exp.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{old_id}'")
    assert orphans == []  # the earlier publication's eval runs went with it
    store["run_ids"][300] = new_id


def test_given_an_incomplete_checkpoint_then_the_parent_is_marked_failed(store: dict, tmp_path: Path) -> None:
    client = store["client"]
    ok = [make_run({0: [1, 0, 1]}, run_index=i, ckpt=checkpoint(999, "other")) for i in range(2)]
    failed = make_run(
        {}, run_index=2, status=RunStatus.FAILED, error="OOMKilled", ckpt=checkpoint(999, "other"), trials=3
    )
    report = aggregate_checkpoint([SourcedRun(str(i), r) for i, r in enumerate([*ok, failed])])
    pid = publish_checkpoint(
        report, client=client, out_dir=tmp_path, experiment="RLinf-incomplete", artifact_location=str(tmp_path / "a")
    )
    run = client.get_run(pid)
    assert run.info.status == "FAILED" and run.data.tags["rlinf_bench.complete"] == "False"
    children = client.search_runs([run.info.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{pid}'")
    failed_child = next(c for c in children if c.data.params["run_index"] == "2")
    assert failed_child.info.status == "FAILED" and failed_child.data.tags["error"] == "OOMKilled"


def test_given_an_unreachable_server_then_bounded_retries_then_failure_with_the_report_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow.tracking import MlflowClient

    # Let our bounded policy, not MLflow's own long retry loop, decide how long to wait.
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    sleeps: list[float] = []
    policy = RetryPolicy(attempts=3, backoff_s=0.5, sleep=sleeps.append)
    report = aggregate_checkpoint([SourcedRun("r.json", make_run({0: [1, 1]}))], runs_expected=1)
    with pytest.raises(TrackingUnavailableError) as err:
        publish_checkpoint(report, client=MlflowClient("http://127.0.0.1:9"), out_dir=tmp_path, retry=policy)
    assert sleeps == [0.5, 1.0]
    assert "127.0.0.1:9" in str(err.value) and str(tmp_path / "checkpoint_report.json") in str(err.value)
    assert json.loads((tmp_path / "checkpoint_report.json").read_text())["suites"][0]["suite"] == "libero_spatial"
    assert (tmp_path / "sr_vs_step.png").stat().st_size > 1000


def test_given_the_pipeline_call_then_previous_comes_from_mlflow_and_probes_are_metrics(
    store: dict, tmp_path: Path
) -> None:
    from rlinf_bench.contracts import Measurement, ProbeResult, ProbeVerdict
    from rlinf_tracking.summarize import summarize_and_publish

    rng = np.random.default_rng(9)
    runs = heterogeneous_runs(rng, np.full((3, 20), 0.9), ckpt=checkpoint(400))
    probe = ProbeResult(
        probe="storage", values={"write_mb_s": Measurement(value=812.0, unit="MB/s")}, verdict=ProbeVerdict.PASS
    )
    report = summarize_and_publish(
        [SourcedRun(f"r{r.run_index}", r) for r in runs],
        client=store["client"],
        out_dir=tmp_path,
        baseline_names=["libero/openvla-oft-sft"],
        probes=[probe],
    )
    previous = next(v for v in report.verdicts if v.kind == "previous")
    assert previous.reference_label == "global_step 300" and previous.paired
    run = store["client"].get_run(report.links["mlflow_run"])
    assert run.data.metrics["infra/storage/write_mb_s"] == 812.0
    assert (tmp_path / "checkpoint_report.json").exists()


def test_given_compare_publish_on_the_cli_then_the_run_is_in_mlflow(
    store: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rlinf_cli.main import main

    rng = np.random.default_rng(10)
    paths = [
        str(r.save(tmp_path / f"r{r.run_index}.json"))
        for r in heterogeneous_runs(rng, np.full((3, 20), 0.9), ckpt=checkpoint(500))
    ]
    uri = store["client"].tracking_uri
    rc = main(
        [
            "compare",
            *paths,
            "--baseline",
            "libero/openvla-oft-rlinf",
            "--publish",
            "--tracking-uri",
            uri,
            "--out",
            str(tmp_path / "out"),
            "--json",
        ]
    )
    assert rc == 0
    report = CheckpointReport.from_json(capsys.readouterr().out)
    assert store["client"].get_run(report.links["mlflow_run"]).data.params["global_step"] == "500"
    assert (tmp_path / "out" / "report.md").exists()


def test_given_more_values_than_one_request_takes_then_all_are_logged(store: dict) -> None:
    from mlflow.entities import Metric, RunTag

    from rlinf_tracking import MlflowPublisher

    client = store["client"]
    publisher = MlflowPublisher(client)
    exp_id = publisher.experiment_id()
    run_id = client.create_run(exp_id, run_name="chunking").info.run_id
    metrics = [Metric(f"success_rate/libero_90/task_{i}", i / 2500, 0, 0) for i in range(2500)]
    tags = [RunTag(f"verdict/robotwin/t{i}", "within") for i in range(250)]
    publisher._log_chunked(run_id, metrics=metrics, params=[], tags=tags)
    data = client.get_run(run_id).data
    assert len(data.metrics) == 2500 and sum(k.startswith("verdict/") for k in data.tags) == 250
    client.delete_run(run_id)


def test_given_an_unreachable_server_then_the_pipeline_call_still_writes_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow.tracking import MlflowClient

    from rlinf_tracking.summarize import summarize_and_publish

    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    sleeps: list[float] = []
    runs = [make_run({0: [1, 0, 1]}, run_index=i) for i in range(3)]
    with pytest.raises(TrackingUnavailableError, match="previous/best are missing"):
        summarize_and_publish(
            [SourcedRun(f"r{i}", r) for i, r in enumerate(runs)],
            client=MlflowClient("http://127.0.0.1:9"),
            out_dir=tmp_path,
            baseline_names=["libero/openvla-oft-sft"],
            retry=RetryPolicy(attempts=2, backoff_s=0.1, sleep=sleeps.append),
        )
    assert sleeps == [0.1]
    saved = CheckpointReport.load(tmp_path / "checkpoint_report.json")
    assert saved.verdicts[0].against == "libero/openvla-oft-sft"  # baseline verdicts need no server


def test_given_a_report_with_recorded_videos_then_they_are_artifacts_of_the_parent_run(tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    from tests.unit.reporting.sitefactory import two_checkpoints

    video = tmp_path / "run0.videos" / "task00_init00.mp4"
    video.parent.mkdir()
    video.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 64)
    report = two_checkpoints(video)[1]
    client = MlflowClient(f"sqlite:///{tmp_path}/mlflow.db")
    client.create_experiment("RLinf", artifact_location=str(tmp_path / "artifacts"))

    pid = publish_checkpoint(report, client=client, out_dir=tmp_path / "out")

    listed = [a.path for a in client.list_artifacts(pid, "videos/libero_spatial/run0")]
    assert listed == ["videos/libero_spatial/run0/task00_init00.mp4"]  # the missing second video is skipped
    local = client.download_artifacts(pid, listed[0], str(tmp_path / "dl"))
    assert Path(local).read_bytes() == video.read_bytes()
