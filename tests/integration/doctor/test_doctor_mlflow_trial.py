"""``doctor --tracking-uri`` leaves no trial run in the user's store: interrupted (SIGINT, SIGTERM) or timed out
after the server made the run, and names the run to delete when deleting is refused. A real MLflow server
behind a proxy that holds the answer to ``runs/create`` (tests/integration/doctor/mlflow_proxy.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

import pytest

from rlinf_bench.doctor import CheckStatus, Target
from rlinf_doctor.mlflow_trial import RUN_NAME, TAG
from tests.integration.doctor.conftest import REPO, by_name, doctor
from tests.integration.doctor.mlflow_proxy import MlflowProxy


def _experiment(uri: str, name: str) -> tuple[Any, str]:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(name)
    return client, exp.experiment_id if exp else client.create_experiment(name)


def _trial_runs(client: Any, exp_id: str, *, deleted: bool = False) -> list[Any]:
    from mlflow.entities import ViewType

    view = ViewType.DELETED_ONLY if deleted else ViewType.ACTIVE_ONLY
    return [r for r in client.search_runs([exp_id], run_view_type=view) if TAG in r.data.tags]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_given_doctor_interrupted_while_the_run_exists_then_the_store_keeps_no_trial_run(
    mlflow_server: str, signum: int
) -> None:
    client, exp_id = _experiment(mlflow_server, f"trial-{signum}")
    with MlflowProxy(mlflow_server, hold_create=True) as proxy:
        argv = ["-m", "rlinf_cli.main", "doctor", "--for", "eval", "--only", "mlflow", "--json"]
        argv += ["--tracking-uri", proxy.uri, "--experiment", f"trial-{signum}", "--timeout", "30"]
        proc = subprocess.Popen(
            [sys.executable, *argv], cwd=REPO, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            assert proxy.created.wait(120), "doctor never asked the server for its trial run"
            [made] = _trial_runs(client, exp_id)  # the run exists; the doctor waits for its id
            proc.send_signal(signum)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    stderr = err.decode()

    assert proc.returncode == 130, stderr
    assert _trial_runs(client, exp_id) == [], "the interrupted doctor left its trial run in the store"
    assert [r.info.run_id for r in _trial_runs(client, exp_id, deleted=True)] == [made.info.run_id]
    assert "interrupted" in stderr and f"the MLflow trial run {made.info.run_id} was deleted" in stderr
    assert made.info.run_name == RUN_NAME


def test_given_the_create_answer_times_out_then_the_run_the_server_made_is_deleted(mlflow_server: str) -> None:
    client, exp_id = _experiment(mlflow_server, "trial-timeout")
    with MlflowProxy(mlflow_server, hold_create=True) as proxy:
        checks = by_name(
            doctor(Target.EVAL, only=["mlflow"], tracking_uri=proxy.uri, experiment="trial-timeout", timeout_s=1)
        )

    write = checks["mlflow.write"]
    assert write.status is CheckStatus.FAIL and "timed out" in write.measured and "was deleted" in write.measured
    assert _trial_runs(client, exp_id) == []
    assert len(_trial_runs(client, exp_id, deleted=True)) == 1


def test_given_deleting_is_refused_then_the_warning_names_the_run_and_the_command_that_deletes_it(
    mlflow_server: str,
) -> None:
    client, exp_id = _experiment(mlflow_server, "trial-refused")
    with MlflowProxy(mlflow_server, refuse_delete=True) as proxy:
        checks = by_name(doctor(Target.EVAL, only=["mlflow"], tracking_uri=proxy.uri, experiment="trial-refused"))

    [left] = _trial_runs(client, exp_id)
    write = checks["mlflow.write"]
    assert write.status is CheckStatus.WARN and "403" in write.measured
    assert f"mlflow runs delete --run-id {left.info.run_id}" in write.fix and proxy.uri in write.fix
    assert left.info.run_name == RUN_NAME and "safe to delete" in left.data.tags["mlflow.note.content"]
