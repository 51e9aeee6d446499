"""throughput and gpu (MLflow mode) against a real local MLflow store holding synthetic training runs.

The synthetic run follows the timeline the probes assume: each step is rollout (60 s), other work
(5 s), policy update (30 s), a 4 s save every 4th step, then the step's metrics are logged. GPU
utilization samples (every 5 s, averaging the 5 s before) read 30 % inside rollouts, 90 % inside
updates and 50 % when their window straddles phases, so a correct split gives exactly 30 and 90.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from infra_probes.probe_cli import build_parser, execute
from rlinf_bench.contracts import ProbeResult, ProbeVerdict

T0 = 1_700_000_000.0
STEPS = 12
GEN, OTHER, UPD, SAVE = 60.0, 5.0, 30.0, 4.0


def timeline() -> tuple[list[dict[str, float]], list[tuple[float, float]], list[tuple[float, float]]]:
    steps, rollouts, updates = [], [], []
    start = T0
    for k in range(1, STEPS + 1):
        save = SAVE if k % 4 == 0 else 0.0
        rollouts.append((start, start + GEN))
        updates.append((start + GEN + OTHER, start + GEN + OTHER + UPD))
        end = start + GEN + OTHER + UPD + save
        steps.append({"step": k, "end": end, "save": save})
        start = end
    return steps, rollouts, updates


def utilization_at(t: float, window: float, rollouts: list[Any], updates: list[Any]) -> float:
    if any(lo <= t - window and t <= hi for lo, hi in updates):
        return 90.0
    if any(lo <= t - window and t <= hi for lo, hi in rollouts):
        return 30.0
    return 50.0


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    experiment = client.create_experiment("rlinf-probes")
    steps, rollouts, updates = timeline()

    def ms(t: float) -> int:
        return int(t * 1000)

    full = client.create_run(experiment).info.run_id
    metrics = []
    for s in steps:
        metrics += [
            Metric("timing/generate", GEN, ms(s["end"]), s["step"]),
            Metric("timing/update", UPD, ms(s["end"]), s["step"]),
            Metric("global_step", s["step"], ms(s["end"]), s["step"]),
        ]
        if s["save"]:
            metrics.append(Metric("timing/save", s["save"], ms(s["end"]), s["step"]))
    t, i = T0 + 5, 0
    while t <= steps[-1]["end"]:
        for gpu in (0, 1):
            util = utilization_at(t, 5.0, rollouts, updates)
            metrics.append(Metric(f"system/gpu_{gpu}_utilization_percentage", util, ms(t), i))
            metrics.append(Metric(f"system/gpu_{gpu}_memory_usage_percentage", 85.0, ms(t), i))
        t, i = t + 5, i + 1
    for chunk in range(0, len(metrics), 900):
        client.log_batch(full, metrics=metrics[chunk : chunk + 900])

    bare = client.create_run(experiment).info.run_id
    client.log_metric(bare, "train/loss", 0.5, step=1)

    no_system = client.create_run(experiment).info.run_id
    client.log_batch(no_system, metrics=[m for m in metrics if not m.key.startswith("system/")])
    # The newest run of its own experiment, for --experiment.
    latest_exp = client.create_experiment("rlinf-latest")
    client.create_run(latest_exp, start_time=ms(T0))
    latest = client.create_run(latest_exp, start_time=ms(T0 + 60)).info.run_id
    client.log_batch(latest, metrics=metrics)
    return {"uri": uri, "full": full, "bare": bare, "no_system": no_system, "latest": latest}


def run(*argv: str) -> ProbeResult:
    return execute(build_parser().parse_args(list(argv)))


def test_given_a_training_run_when_throughput_is_probed_then_steps_per_hour_and_phase_summaries_match(
    store: dict[str, str],
) -> None:
    result = run("throughput", "--run-id", store["full"], "--tracking-uri", store["uri"])
    steps, _, _ = timeline()
    expected_rate = (STEPS - 1) / (steps[-1]["end"] - steps[0]["end"]) * 3600
    assert result.values["steps_per_hour"].value == pytest.approx(expected_rate)
    assert result.values["generate_mean_s"].value == GEN and result.values["update_p95_s"].value == UPD
    assert result.values["save_mean_s"].value == SAVE and result.details["summaries"]["save"]["n"] == 3
    step_wall = GEN + OTHER + UPD
    assert result.details["step_wall_s"] == pytest.approx(step_wall)
    assert result.values["rollout_share_pct"].value == pytest.approx(100 * GEN / step_wall)
    assert result.values["update_share_pct"].value == pytest.approx(100 * UPD / step_wall)
    assert result.details["bottleneck"] == "rollout" and "bottleneck: rollout" in result.reason
    assert result.verdict == ProbeVerdict.PASS and result.target is not None
    assert result.target.metric == "save_p95_s"


def test_given_a_run_without_phase_timings_when_throughput_is_probed_then_not_available_names_them(
    store: dict[str, str],
) -> None:
    result = run("throughput", "--run-id", store["bare"], "--tracking-uri", store["uri"])
    assert result.verdict == ProbeVerdict.NOT_AVAILABLE
    assert "timing/generate" in result.reason and "train/loss" in result.reason


def test_given_an_unknown_run_id_when_probed_then_fail_names_the_run(store: dict[str, str]) -> None:
    result = run("throughput", "--run-id", "0123456789abcdef", "--tracking-uri", store["uri"])
    assert result.verdict == ProbeVerdict.FAIL and "0123456789abcdef" in result.reason


def test_given_system_metrics_and_timings_when_gpu_reads_mlflow_then_update_and_rollout_split_exactly(
    store: dict[str, str],
) -> None:
    result = run("gpu", "--run-id", store["full"], "--tracking-uri", store["uri"])
    assert result.values["util_update_pct"].value == pytest.approx(90.0)
    assert result.values["util_rollout_pct"].value == pytest.approx(30.0)
    assert result.values["util_overall_pct"].value < 90.0  # straddling samples are in the overall mean only
    assert result.values["memory_used_pct"].value == pytest.approx(85.0)
    assert result.details["sample_window_s"] == pytest.approx(5.0) and result.details["gpus"] == [0, 1]
    assert result.verdict == ProbeVerdict.PASS and result.target is not None
    assert result.target.metric == "util_update_pct"
    assert [c["passed"] for c in result.details["checks"]] == [True]
    assert "NVML utilization" in result.reason


def test_given_a_run_without_system_metrics_when_gpu_reads_mlflow_then_not_available_says_how_to_log_them(
    store: dict[str, str],
) -> None:
    result = run("gpu", "--run-id", store["no_system"], "--tracking-uri", store["uri"])
    assert result.verdict == ProbeVerdict.NOT_AVAILABLE
    assert "MLFLOW_ENABLE_SYSTEM_METRICS_LOGGING" in result.reason


def test_given_no_nvml_package_when_gpu_samples_then_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails as if nvidia-ml-py were absent
    result = run("gpu", "--window-s", "0.2", "--interval-s", "0.1")
    assert result.verdict == ProbeVerdict.NOT_AVAILABLE and "nvidia-ml-py" in result.reason


def test_given_no_gpu_driver_when_gpu_samples_then_not_available_with_nvmls_reason() -> None:
    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        pass
    else:
        pynvml.nvmlShutdown()
        pytest.skip("this machine has a working NVIDIA driver")
    result = run("gpu", "--window-s", "0.2", "--interval-s", "0.1")
    assert result.verdict == ProbeVerdict.NOT_AVAILABLE and "NVML did not start" in result.reason
    assert result.values == {}


def test_given_a_result_when_written_with_out_then_it_reloads_as_a_probe_result(
    store: dict[str, str], tmp_path: Path
) -> None:
    from rlinf_cli.main import main

    out = tmp_path / "results" / "throughput.json"
    rc = main(["probe", "throughput", "--run-id", store["full"], "--tracking-uri", store["uri"], "--out", str(out)])
    assert rc == 0
    loaded = ProbeResult.load(out)
    assert loaded.probe == "throughput" and loaded.verdict == ProbeVerdict.PASS


def test_given_an_experiment_name_when_probed_then_its_most_recent_run_is_read(store: dict[str, str]) -> None:
    result = run("throughput", "--experiment", "rlinf-latest", "--tracking-uri", store["uri"])
    assert result.details["run_id"] == store["latest"] and result.verdict == ProbeVerdict.PASS
    gpu = run("gpu", "--experiment", "rlinf-latest", "--tracking-uri", store["uri"])
    assert gpu.details["run_id"] == store["latest"] and gpu.values["util_update_pct"].value == pytest.approx(90.0)


def test_given_an_unknown_experiment_or_no_run_when_probed_then_fail_says_what_to_pass(store: dict[str, str]) -> None:
    unknown = run("throughput", "--experiment", "no-such-experiment", "--tracking-uri", store["uri"])
    assert unknown.verdict == ProbeVerdict.FAIL and "no-such-experiment" in unknown.reason
    neither = run("throughput", "--tracking-uri", store["uri"])
    assert neither.verdict == ProbeVerdict.FAIL and "--run-id" in neither.reason


def test_given_an_s3_out_when_emitted_then_the_result_lands_in_the_bucket(
    store: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import boto3
    from moto import mock_aws

    from infra_probes.probe_cli import emit

    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    args = build_parser().parse_args(
        ["throughput", "--run-id", store["full"], "--tracking-uri", store["uri"], "--out", "s3://probes/run/tp.json"]
    )
    result = execute(args)
    with mock_aws():
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket="probes")
        emit(result, args)
        body = s3.get_object(Bucket="probes", Key="run/tp.json")["Body"].read()
    assert ProbeResult.from_json(body) == result
