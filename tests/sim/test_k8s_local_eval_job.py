"""The LocalExecutor runs a real eval Job (the same manifest a cluster would get) to completion on LIBERO."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlinf_bench.contracts import (
    CheckpointRef,
    EvalRequest,
    JobSettings,
    Resources,
    RunResult,
    RunStatus,
    SuiteSelection,
)
from rlinf_k8s.jobs import jobs_for_request
from rlinf_k8s.submitter import JobState
from rlinf_local.local_executor import LocalExecutor

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.sim
def test_given_a_tiny_eval_request_when_its_job_runs_locally_then_it_succeeds_with_a_run_result(
    tmp_path: Path, libero_cache: Path
) -> None:
    request = EvalRequest(
        checkpoint=CheckpointRef(uri="", experiment="k8s-local", global_step=0),
        suites=[SuiteSelection(name="libero_spatial", tasks=[0], max_steps=5)],
        runs=1,
        seeds=[0],
        trials_per_task=1,
        policy="builtin:zero",
        workers=1,
        image="rlinf-eval:dev",
        resources=Resources(gpu=0, cpu="1", memory="2Gi"),
        output_prefix=str(tmp_path / "results"),
        probes=[],  # the eval Job alone (the default matrix also probes the cluster)
        kubernetes=JobSettings(
            checkpoint_pvc="", eval_deadline_s=600, backoff_limit=0, env={"RLINF_BENCH_CACHE": str(libero_cache)}
        ),
    )
    (bundle,) = jobs_for_request(request)
    executor = LocalExecutor(tmp_path / "jobs", max_parallel=1, cwd=REPO)

    try:
        executor.submit(bundle)
        status = executor.wait(bundle.name, bundle.namespace, timeout_s=600)
        logs = executor.logs(bundle.name, bundle.namespace, tail_lines=40)
    finally:
        executor.shutdown()

    assert status.state == JobState.SUCCEEDED, f"{status.describe()}\n{logs}"
    run = request.expand()[0]
    assert run.output_uri is not None
    result = RunResult.load(run.output_uri)
    assert result.status == RunStatus.COMPLETE
    assert result.request_id == request.request_id
    assert result.suite == "libero_spatial"
    assert [t.trials for t in result.tasks] == [1]
    assert result.policy == "builtin:zero"
