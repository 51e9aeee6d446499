"""What the job_submitter Lambda pays on our side of a Kubernetes submission.

Measures, on this machine:
- cold import of the Kubernetes backend (a new interpreter each time; part of every Lambda cold start);
- building + validating the Jobs of an EvalRequest (example request: 9 Jobs; all 5 LIBERO suites x 3 runs + 3 probes: 18 Jobs);
- minting an EKS token (presigning is local: no network call);
- one submit (POST Job, 201) and one status (GET Job + LIST pods) through the official client against
  the loopback fake API server from the integration tests, so the figure is client + HTTP overhead,
  without a network or a real API server.

Run: .venv/bin/python bench/k8s_submit.py   (writes bench/results/k8s_submit.json)
"""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# The fake API server lives with the tests that use it; a script run from bench/ must add the repo root.
sys.path.insert(0, str(REPO))

import botocore.session  # noqa: E402
import yaml  # noqa: E402

from rlinf_bench.contracts import EvalRequest, SuiteSelection  # noqa: E402
from rlinf_k8s.api_client import ApiCaller, api_client_for_url  # noqa: E402
from rlinf_k8s.eks_auth import make_token  # noqa: E402
from rlinf_k8s.jobs import jobs_for_request  # noqa: E402
from rlinf_k8s.kubernetes_backend import KubernetesSubmitter  # noqa: E402
from tests.integration.k8s.fake_apiserver import FakeApiServer  # noqa: E402

GOALS = {"cold_import_s": 1.0, "build_ms_per_job": 5.0, "submit_p50_ms": 20.0}


def _timed(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _summary(ms: list[float]) -> dict[str, float]:
    ms = sorted(ms)
    return {"p50_ms": round(statistics.median(ms), 3), "p99_ms": round(ms[int(0.99 * (len(ms) - 1))], 3), "n": len(ms)}


def cold_import(n: int = 5) -> list[float]:
    code = "import rlinf_k8s.kubernetes_backend, rlinf_k8s.api_client, rlinf_k8s.jobs"
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
        out.append(time.perf_counter() - t0)
    return out


def main() -> int:
    example = EvalRequest.from_dict(yaml.safe_load((REPO / "examples/eval-request.yaml").read_text()))
    big = example.model_copy(
        update={
            "suites": [
                SuiteSelection(name=s)
                for s in ("libero_spatial", "libero_object", "libero_goal", "libero_10", "libero_90")
            ]
        }
    )
    n_example, n_big = len(jobs_for_request(example)), len(jobs_for_request(big))
    build_example = _timed(lambda: jobs_for_request(example), 50)
    build_big = _timed(lambda: jobs_for_request(big), 20)

    session = botocore.session.Session()
    session.set_credentials("AKIAFAKEFAKEFAKEFAKE", "fake-secret")
    sts = session.create_client("sts", region_name="us-east-1")
    token = _timed(lambda: make_token(sts, "rlinf-cluster"), 200)

    bundles = jobs_for_request(big)
    eval_bundle = next(b for b in bundles if b.kind == "eval")
    with FakeApiServer() as fake:
        sub = KubernetesSubmitter(ApiCaller(api_client_for_url(fake.url, token="bench")))
        names = iter(range(10**6))

        def submit_one() -> None:
            b = eval_bundle
            job = b.job.model_copy(deep=True)
            job.metadata.name = f"bench-{next(names)}"
            sub.submit(type(b)(kind=b.kind, name=job.metadata.name, namespace=b.namespace, job=job))

        submit_one()  # warm the connection pool
        submit = _timed(submit_one, 200)
        resubmit = _timed(lambda: sub.submit(eval_bundle), 200)  # first 201, then 409 (+ nothing else for a plain Job)
        status = _timed(lambda: sub.status(eval_bundle.name, eval_bundle.namespace), 200)

    imports = cold_import()
    result = {
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
        "cold_import_s": {"median": round(statistics.median(imports), 3), "runs": [round(x, 3) for x in imports]},
        "build": {
            "example_request_jobs": n_example,
            "example_request": _summary(build_example),
            "five_suite_request_jobs": n_big,
            "five_suite_request": _summary(build_big),
            "ms_per_job": round(statistics.median(build_big) / n_big, 3),
        },
        "eks_token_mint": _summary(token),
        "submit_new_job": _summary(submit),
        "resubmit_existing_job": _summary(resubmit),
        "status": _summary(status),
        "goals": GOALS,
    }
    result["goals_met"] = {
        "cold_import_s": result["cold_import_s"]["median"] < GOALS["cold_import_s"],
        "build_ms_per_job": result["build"]["ms_per_job"] < GOALS["build_ms_per_job"],
        "submit_p50_ms": result["submit_new_job"]["p50_ms"] < GOALS["submit_p50_ms"],
    }
    out = REPO / "bench" / "results" / "k8s_submit.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    sys.exit(main())
