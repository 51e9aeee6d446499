"""A real probe Job (storage) runs under the LocalExecutor and writes its ProbeResult where the Job says."""

from __future__ import annotations

from pathlib import Path

from rlinf_bench.contracts import (
    CheckpointRef,
    EvalRequest,
    JobSettings,
    ProbeResult,
    ProbeSpec,
    ProbeVerdict,
    Resources,
)
from rlinf_k8s.jobs import jobs_for_request
from rlinf_k8s.submitter import JobState
from rlinf_local.local_executor import LocalExecutor

REPO = Path(__file__).resolve().parents[3]


def test_given_a_storage_probe_job_when_run_locally_then_it_succeeds_with_a_probe_result(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    request = EvalRequest(
        checkpoint=CheckpointRef(uri="/fsx/c", experiment="e", global_step=1),
        suites=[],
        probe_image="probe:dev",
        resources=Resources(gpu=0, cpu="1", memory="1Gi"),
        # A target every disk meets: the test is about the Job plumbing, not this box's disk speed.
        probes=[
            ProbeSpec(
                name="storage",
                gpus_per_node=0,
                args=["--path", str(scratch), "--size", "8M", "--block-size", "1M", "--target", "write_mb_s>=0"],
            )
        ],
        output_prefix=str(tmp_path / "results"),
        kubernetes=JobSettings(checkpoint_pvc=""),
    )
    (bundle,) = jobs_for_request(request)
    executor = LocalExecutor(tmp_path / "jobs", cwd=REPO)

    try:
        executor.submit(bundle)
        status = executor.wait(bundle.name, bundle.namespace, timeout_s=120)
    finally:
        executor.shutdown()

    assert status.state == JobState.SUCCEEDED, status.describe()
    result = ProbeResult.load(tmp_path / "results" / request.request_id / "probes" / "storage.json")
    assert result.probe == "storage"
    assert result.verdict == ProbeVerdict.PASS
    assert result.values["write_mb_s"].value > 0
