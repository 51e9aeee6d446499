"""MLflow as its users know it, against a real ``mlflow server``: the experiment typed for classic ML,
runs found by the training experiment's name, a description per run, a LoggedModel per checkpoint with
its metrics, and the registered model's ``best`` alias on the better checkpoint."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rlinf_bench.stats.aggregate import SourcedRun
from rlinf_tracking.mlflow_experiments import CLASSIC_ML_KIND, EXPERIMENT_KIND_TAG
from rlinf_tracking.mlflow_models import BEST_ALIAS, TAG_LOGGED_MODEL
from rlinf_tracking.summarize import summarize_and_publish
from tests.mlflow_server import MlflowServer
from tests.unit.stats.runfactory import checkpoint, heterogeneous_runs

MODEL = "RLinf.demo"


def _publish(client: Any, step: int, rate: float, out: Path, seed: int) -> Any:
    runs = heterogeneous_runs(np.random.default_rng(seed), np.full((3, 20), rate), ckpt=checkpoint(step, "demo"))
    return summarize_and_publish(
        [SourcedRun(f"s{step}-r{r.run_index}", r) for r in runs],
        client=client,
        out_dir=out / f"step{step}",
        baseline_names=["libero/openvla-oft-sft"],
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from mlflow.tracking import MlflowClient

    srv = MlflowServer(tmp_path_factory.mktemp("mlflow-server"))
    srv.start()
    try:
        client = MlflowClient(srv.uri)
        out = tmp_path_factory.mktemp("out")
        reports = {100: _publish(client, 100, 0.8, out, 1), 200: _publish(client, 200, 0.3, out, 2)}
        yield {"client": client, "uri": srv.uri, "reports": reports, "out": out}
    finally:
        srv.stop()


def test_given_published_checkpoints_then_the_experiment_is_typed_for_classic_ml(server: dict) -> None:
    exp = server["client"].get_experiment_by_name("RLinf")
    assert exp.tags[EXPERIMENT_KIND_TAG] == CLASSIC_ML_KIND


def test_given_a_checkpoint_run_then_it_has_a_description_with_its_verdicts(server: dict) -> None:
    report = server["reports"][200]
    run = server["client"].get_run(report.links["mlflow_run"])
    text = run.data.tags["mlflow.note.content"]
    assert text.startswith("**demo global_step 200: SR ")
    assert "libero_spatial: SR" in text and "vs previous (global_step 100)" in text
    assert run.data.tags["rlinf_bench.experiment"] == "demo"


def test_given_each_checkpoint_then_one_logged_model_with_its_metrics_linked(server: dict) -> None:
    client = server["client"]
    exp = client.get_experiment_by_name("RLinf")
    models = {m.name: m for m in client.search_logged_models([exp.experiment_id])}
    assert set(models) == {"demo-global_step_100", "demo-global_step_200"}
    for step, report in server["reports"].items():
        model = models[f"demo-global_step_{step}"]
        assert model.source_run_id == report.links["mlflow_run"] and model.model_id == report.links["mlflow_model"]
        linked = {m.key: m.value for m in model.metrics or []}
        assert linked["success_rate"] == pytest.approx(report.success_rate)
        assert "success_rate/libero_spatial" in linked
        assert model.params["global_step"] == str(step) and str(model.status) == "READY"


def test_given_two_checkpoints_then_best_is_the_one_with_the_higher_success_rate(server: dict) -> None:
    client = server["client"]
    best = client.get_model_version_by_alias(MODEL, BEST_ALIAS)
    assert best.tags["global_step"] == "100"  # 80 % beats the later 30 %
    assert best.tags[TAG_LOGGED_MODEL] == server["reports"][100].links["mlflow_model"]
    assert len(client.search_model_versions(f"name = '{MODEL}'")) == 2


def test_given_a_better_checkpoint_then_the_best_alias_moves_to_it(server: dict) -> None:
    client = server["client"]
    report = _publish(client, 300, 0.95, server["out"], 3)
    best = client.get_model_version_by_alias(MODEL, BEST_ALIAS)
    assert best.tags["global_step"] == "300" and best.tags[TAG_LOGGED_MODEL] == report.links["mlflow_model"]


def test_given_a_republished_checkpoint_then_its_old_model_and_version_go(server: dict) -> None:
    client = server["client"]
    old = server["reports"][100].links["mlflow_model"]
    again = _publish(client, 100, 0.8, server["out"] / "again", 4)
    exp = client.get_experiment_by_name("RLinf")
    ids = {m.model_id for m in client.search_logged_models([exp.experiment_id])}
    assert old not in ids and again.links["mlflow_model"] in ids
    steps = sorted(v.tags["global_step"] for v in client.search_model_versions(f"name = '{MODEL}'"))
    assert steps == ["100", "200", "300"]
    assert client.get_model_version_by_alias(MODEL, BEST_ALIAS).tags["global_step"] == "300"


def test_given_the_briefs_query_then_it_still_finds_the_checkpoint_runs_with_success_rate(server: dict) -> None:
    client = server["client"]
    exp = client.get_experiment_by_name("RLinf")
    runs = client.search_runs([exp.experiment_id], filter_string="params.val_only = 'True'")
    assert sorted(r.data.params["global_step"] for r in runs) == ["100", "200", "300"]
    assert all("success_rate" in r.data.metrics for r in runs)


def test_given_the_training_experiments_name_then_report_finds_its_runs(
    server: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rlinf_cli.main import main

    assert main(["report", "--tracking-uri", server["uri"], "--experiment", "demo", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("3 checkpoint(s)")


def test_given_an_unknown_experiment_then_report_lists_the_names_and_fails(
    server: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rlinf_cli.main import main

    rc = main(["report", "--tracking-uri", server["uri"], "--experiment", "dmeo", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc != 0 and "'dmeo' not found" in err and "(RLinf)" in err and "(demo)" in err
