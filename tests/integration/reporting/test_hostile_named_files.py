"""No file outside a run's results prefix reaches the report, MLflow or the local report folder, by any field.

A hostile eval Job writes a RunResult whose ``video`` fields name every file an attacker would want and every
trick to reach one (other prefixes and buckets, ``..``, local secrets, ``/proc/self/environ``, a text file
named .mp4), and, after the Aggregate state, rewrites the stored report (links, sources, videos), as anything
with write access to the results prefix can. Then the real Aggregate and Publish states run on moto's S3 with
a real MLflow store, the embedded default writes its local report folder, and ``rlinf-bench report`` rebuilds
the site from MLflow. Every byte each of them wrote is searched for the secrets: none is there, the one real
video is, and the task page says why each other one is not.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rlinf_aws.s3_objects import S3Objects
from rlinf_aws.state_aggregate import aggregate
from rlinf_aws.state_publish import publish
from rlinf_bench.contracts import CheckpointRef, CheckpointReport, EvalRequest, RunResult, SuiteSelection
from rlinf_bench.contracts.layout import report_prefix
from rlinf_bench.contracts.workflow import AggregateInput, OutcomeStatus, RunOutcome
from rlinf_bench.document_store import Storage
from rlinf_cli.main import main
from rlinf_local.pipeline_command import write_report
from tests.unit.stats.runfactory import make_run

BUCKET, OTHER = "rlinf-ckpts", "someone-elses-bucket"
HEADER = b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2"
GOOD = HEADER + b"GOOD-VIDEO-OF-RUN-0"
SECRETS = [b"SECRET-ALICE", b"SECRET-OTHER-BUCKET", b"SECRET-LOCAL-MP4", b"SECRET-CREDENTIALS", b"SECRET-TEXT-MP4"]
SECRETS += [b"SECRET-PROBE", b"SECRET-LINKED-REPORT"]


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        for bucket in (BUCKET, OTHER):
            s3.create_bucket(Bucket=bucket)
        yield s3


def _request() -> EvalRequest:
    ckpt = CheckpointRef(uri=f"s3://{BUCKET}/exp/checkpoints/global_step_100", experiment="exp", global_step=100)
    return EvalRequest(
        checkpoint=ckpt,
        suites=[SuiteSelection(name="libero_spatial", tasks=[0])],
        runs=3,
        trials_per_task=12,
        output_prefix=f"s3://{BUCKET}/results",
        baselines=[],
    )


def _hostile_names(root: str, local: Path) -> list[str]:
    """One named file per initial state: the run's real video, then a trick each."""
    folder = f"{root}/libero_spatial"
    return [
        f"{folder}/run0.videos/task00_init00.mp4",  # the real one
        f"s3://{BUCKET}/alice/results/r/m1/libero_spatial/run0.videos/v.mp4",  # another user's prefix
        f"s3://{OTHER}/{folder.removeprefix(f's3://{BUCKET}/')}/run0.videos/task00_init00.mp4",  # another bucket
        f"{folder}/run0.videos/../../../../../alice/results/r/m1/libero_spatial/run0.videos/v.mp4",
        f"{folder}/run0.videos/..%2f..%2f..%2f..%2f..%2falice%2fresults%2fr%2fm1%2flibero_spatial%2frun0.videos%2fv.mp4",
        f"{folder}/run0.videos/\uff0e\uff0e/v.mp4",
        f"{folder}/run0.videos/text.mp4",  # inside, but text
        f"{root}/probes/gpu.json",  # inside the results root, outside the run's folder
        str(local / "secret.mp4"),  # a local video-looking secret (the aggregator's own disk)
        str(local / "credentials"),
        "/proc/self/environ",
        "http://evil.example/track.gif",
    ]


def _store(s3: Any, uri: str, body: bytes) -> None:
    bucket, key = uri.removeprefix("s3://").split("/", 1)
    s3.put_object(Bucket=bucket, Key=key, Body=body)


def _outcomes(s3: Any, request: EvalRequest, root: str, local: Path) -> list[RunOutcome]:
    names = _hostile_names(root, local)
    outcomes = []
    for run in request.expand(root):
        result = make_run({0: [i % 2 for i in range(12)]}, run_index=run.run_index, ckpt=request.checkpoint)
        result = result.model_copy(update={"seed": run.seed, "request_id": run.request_id, "policy": request.policy})
        task = result.tasks[0]
        eps = [e.model_copy(update={"video": names[e.init_state]}) for e in task.episodes]
        result = result.with_tasks([task.model_copy(update={"episodes": eps})])
        assert isinstance(result, RunResult) and run.output_uri
        _store(s3, run.output_uri, result.to_json().encode())
        outcomes.append(
            RunOutcome(
                status=OutcomeStatus.SUCCEEDED,
                kind="eval",
                result_uri=run.output_uri,
                suite=run.suite,
                run_index=run.run_index,
            )
        )
    return outcomes


def _plant_secrets(s3: Any, root: str, local: Path) -> None:
    folder = f"{root}/libero_spatial"
    _store(s3, f"{folder}/run0.videos/task00_init00.mp4", GOOD)
    _store(s3, f"s3://{BUCKET}/alice/results/r/m1/libero_spatial/run0.videos/v.mp4", HEADER + b"SECRET-ALICE")
    _store(
        s3,
        f"s3://{OTHER}/{folder.removeprefix(f's3://{BUCKET}/')}/run0.videos/task00_init00.mp4",
        HEADER + b"SECRET-OTHER-BUCKET",
    )
    _store(s3, f"{folder}/run0.videos/text.mp4", b"aws_secret_access_key = SECRET-TEXT-MP4\n")
    _store(s3, f"{root}/probes/gpu.json", HEADER + b"SECRET-PROBE")
    _store(s3, f"s3://{BUCKET}/alice/report.html", b"<html>SECRET-LINKED-REPORT</html>")
    local.mkdir()
    (local / "secret.mp4").write_bytes(HEADER + b"SECRET-LOCAL-MP4")
    (local / "credentials").write_text("[default]\naws_secret_access_key = SECRET-CREDENTIALS\n")


def _tamper_stored_report(s3: Any, report_uri: str, local: Path) -> None:
    """What a Job with write access to the results prefix could do between Aggregate and Publish."""
    storage = Storage(S3Objects(s3))
    report = CheckpointReport.read(report_uri, storage=storage)
    report.links["report_site"] = f"s3://{BUCKET}/alice/report.html"
    for suite in report.suites:
        for run in suite.runs:
            run.source = str(local / "run0.json")  # "my result came from the aggregator's disk"
        for state in suite.states:
            for e in state.episodes:
                if e.video and "credentials" in e.video:
                    e.video = str(local / "secret.mp4")
    storage.write_text(report_uri, report.to_json())


def _all_bytes(s3: Any, prefix_uri: str) -> bytes:
    bucket, prefix = prefix_uri.removeprefix("s3://").split("/", 1)
    out = b""
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            out += s3.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
    return out


def _folder_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def _assert_clean(where: str, data: bytes) -> None:
    leaked = [s.decode() for s in SECRETS if s in data]
    assert not leaked, f"{where} holds {leaked}"
    assert b"GOOD-VIDEO-OF-RUN-0" in data, f"{where} lost the run's own video"


@pytest.mark.slow
def test_no_file_outside_the_runs_results_reaches_the_site_mlflow_or_the_local_report(
    aws: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mlflow.tracking import MlflowClient

    s3 = aws
    request = _request()
    root = request.result_root(request.digest())
    local = tmp_path / "aggregator-disk"
    _plant_secrets(s3, root, local)
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    MlflowClient(uri).create_experiment("RLinf", artifact_location=str(tmp_path / "artifacts"))
    storage = Storage(S3Objects(s3))

    aggregated = aggregate(
        AggregateInput(
            request=request, eval_items=[], result_root=root, outcomes=[_outcomes(s3, request, root, local), []]
        ),
        storage=storage,
    )
    _tamper_stored_report(s3, aggregated.report_uri, local)
    topic = boto3.client("sns", region_name="us-east-1").create_topic(Name="results")["TopicArn"]
    published = publish(
        aggregated,
        storage=storage,
        sns=boto3.client("sns", region_name="us-east-1"),
        topic_arn=topic,
        mlflow=lambda: MlflowClient(uri),
    )
    assert published.mlflow_run_id and not published.mlflow_error

    # The results store's report and site, as the aggregator wrote them.
    _assert_clean("the report prefix", _all_bytes(s3, report_prefix(root)))
    task = storage.read_text(f"{report_prefix(root)}/site/checkpoints/exp-step_100/libero_spatial/task_0.html")
    for why in ("outside the run&#39;s own folder", "&#39;..&#39; segment", "characters other than", "not a URL"):
        assert why in task, why
    assert "not a recognised media file" in task
    # MLflow's artifacts of the parent run.
    _assert_clean("MLflow's artifacts", _folder_bytes(tmp_path / "artifacts"))
    videos = [p for p in (tmp_path / "artifacts").rglob("*") if p.is_file() and "videos" in p.parts]
    assert videos and {p.read_bytes() for p in videos} == {GOOD}  # each run names it: one copy per run folder
    # The embedded default's local report folder, from the stored report (tampered) and the bucket.
    out = tmp_path / "embedded"
    (out / "reports").mkdir(parents=True)
    (out / "reports" / "exp-s100.json").write_bytes(storage.read_bytes(aggregated.report_uri))
    write_report(out, uri, s3_client=s3, results_prefix=f"s3://{BUCKET}/results")
    data = _folder_bytes(out / "report")
    assert not [s for s in SECRETS if s in data], "the local report folder holds a secret"
    # `rlinf-bench report` rebuilt from MLflow.
    assert main(["report", "--tracking-uri", uri, "--out", str(tmp_path / "from-mlflow")]) == 0
    _assert_clean("the report rebuilt from MLflow", _folder_bytes(tmp_path / "from-mlflow"))
    assert str(tmp_path / "from-mlflow" / "report.html") in capsys.readouterr().out
