"""The multi-node NCCL probe's argv really rendezvous: two 'nodes' of the Indexed Job on loopback (gloo).

Each process gets exactly the command Kubernetes would run in pod <index> (``$(JOB_COMPLETION_INDEX)``
expanded from the env the Job controller sets); only the rank-0 DNS name is pointed at 127.0.0.1 and
``torchrun`` runs as this interpreter's ``torch.distributed.run`` (what the local executor does).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from rlinf_bench.contracts import CheckpointRef, EvalRequest, ProbeResult, ProbeSpec, ProbeVerdict
from rlinf_k8s.container import local_command
from rlinf_k8s.jobs import jobs_for_request

REPO = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_given_a_two_node_nccl_probe_job_when_both_indexes_run_then_torchrun_joins_one_world(tmp_path: Path) -> None:
    args = ["--backend", "gloo", "--min-bytes", "64K", "--max-bytes", "128K", "--iters", "2", "--warmup", "1"]
    request = EvalRequest(
        checkpoint=CheckpointRef(uri="/fsx/c", experiment="e", global_step=1),
        suites=[],
        probe_image="probe:dev",
        probes=[ProbeSpec(name="nccl", nodes=2, gpus_per_node=1, args=[*args, "--target", "busbw_gbps>=0"])],
        output_prefix=str(tmp_path),
    )
    (bundle,) = jobs_for_request(request)
    endpoint, port = f"{bundle.name}-0.{bundle.name}:29500", _free_port()

    procs = []
    for index in range(2):
        cmd = local_command(
            bundle.job, pod_name=f"{bundle.name}-{index}", extra_env={"JOB_COMPLETION_INDEX": str(index)}
        )
        assert cmd.argv[:3] == [sys.executable, "-m", "torch.distributed.run"]  # torchrun, this interpreter
        assert f"--node-rank={index}" in cmd.argv
        argv = [a.replace(endpoint, f"127.0.0.1:{port}") for a in cmd.argv]
        env = {**os.environ, **cmd.env, "OMP_NUM_THREADS": "1"}
        procs.append(subprocess.Popen(argv, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    outputs = [p.communicate(timeout=300)[0].decode(errors="replace") for p in procs]

    assert [p.returncode for p in procs] == [0, 0], "\n".join(o[-3000:] for o in outputs)
    result = ProbeResult.load(tmp_path / request.request_id / "probes" / "nccl.json")
    assert result.verdict == ProbeVerdict.PASS
    assert result.values["ranks"].value == 2
    assert result.values["wrong_elements"].value == 0
