"""The KubernetesSubmitter, through the official client, against an HTTP-level fake API server."""

from __future__ import annotations

from pathlib import Path

import botocore.auth
import botocore.session
import pytest
import yaml
from kubernetes import client as k8s

from rlinf_bench.contracts import EvalRequest
from rlinf_bench.errors import ClusterUnreachableError, ConfigError, JobNotFoundError, KubernetesError
from rlinf_k8s.api_client import (
    ApiCaller,
    RetryPolicy,
    api_client_for_endpoint,
    api_client_for_url,
    api_client_from_kubeconfig,
)
from rlinf_k8s.eks_auth import ClusterEndpoint, EksTokenProvider
from rlinf_k8s.jobs import jobs_for_request
from rlinf_k8s.kubernetes_backend import KubernetesSubmitter
from rlinf_k8s.submitter import JobState
from tests.integration.k8s.conftest import SleepRecorder
from tests.integration.k8s.fake_apiserver import FakeApiServer


def _eval_and_probe(req: EvalRequest):  # type: ignore[no-untyped-def]
    bundles = jobs_for_request(req)
    return [b for b in bundles if b.kind == "eval"], next(b for b in bundles if b.kind == "probe")


def test_given_a_cluster_when_jobs_are_created_then_get_list_and_delete_see_them(
    fake: FakeApiServer, caller: ApiCaller, request_obj: EvalRequest
) -> None:
    evals, _ = _eval_and_probe(request_obj)
    sub = KubernetesSubmitter(caller)
    for b in evals:
        assert sub.submit(b).created is True
    batch = k8s.BatchV1Api(caller.api_client)
    ns = evals[0].namespace

    listed = batch.list_namespaced_job(ns, label_selector="rlinf-bench/suite=libero_spatial")
    got = batch.read_namespaced_job(evals[0].name, ns)

    assert sorted(j.metadata.name for j in listed.items) == sorted(b.name for b in evals)
    assert got.spec.template.spec.containers[0].command[:4] == ["python", "-m", "eval_runner", "--request"]
    assert sub.status(evals[0].name, ns).state == JobState.PENDING
    assert sub.cancel(evals[0].name, ns) is True
    assert fake.cluster.requests[-1].query["propagationPolicy"] == ["Background"]
    assert sub.cancel(evals[0].name, ns) is False
    with pytest.raises(JobNotFoundError, match="never submitted, cancelled, or deleted"):
        sub.status(evals[0].name, ns)


def test_given_an_existing_job_when_resubmitted_then_409_counts_as_success(
    fake: FakeApiServer, caller: ApiCaller, request_obj: EvalRequest
) -> None:
    evals, _ = _eval_and_probe(request_obj)
    sub = KubernetesSubmitter(caller)
    sub.submit(evals[0])

    again = sub.submit(evals[0])

    assert again.created is False
    assert [r.status for r in fake.cluster.requests if r.method == "POST"] == [201, 409]
    assert len(fake.cluster.objects["jobs"]) == 1


def test_given_a_multinode_probe_when_submitted_then_the_service_is_owned_by_the_indexed_job(
    fake: FakeApiServer, caller: ApiCaller, request_obj: EvalRequest
) -> None:
    _, probe = _eval_and_probe(request_obj)
    sub = KubernetesSubmitter(caller)

    sub.submit(probe)
    assert sub.submit(probe).created is False  # idempotent for both objects

    job = fake.cluster.objects["jobs"][(probe.namespace, probe.name)]
    svc = fake.cluster.objects["services"][(probe.namespace, probe.name)]
    assert job["spec"]["completionMode"] == "Indexed"
    assert svc["metadata"]["ownerReferences"][0]["uid"] == job["metadata"]["uid"]
    sub.cancel(probe.name, probe.namespace)
    assert fake.cluster.objects["services"] == {}  # garbage-collected with its Job


def test_given_the_service_cannot_be_created_when_submitting_then_the_job_is_rolled_back(
    fake: FakeApiServer, caller: ApiCaller, request_obj: EvalRequest
) -> None:
    _, probe = _eval_and_probe(request_obj)
    fake.cluster.fail_next("POST", "services", 403)

    with pytest.raises(KubernetesError, match="forbidden"):
        KubernetesSubmitter(caller).submit(probe)

    assert fake.cluster.objects["jobs"] == {}
    assert fake.cluster.objects["services"] == {}
    assert fake.cluster.count("DELETE", "jobs") == 1


def test_given_a_500_when_submitting_then_it_retries_with_backoff_and_succeeds(
    fake: FakeApiServer, caller: ApiCaller, request_obj: EvalRequest, sleeps: SleepRecorder
) -> None:
    evals, _ = _eval_and_probe(request_obj)
    fake.cluster.fail_next("POST", "jobs", 500, times=2)

    result = KubernetesSubmitter(caller).submit(evals[0])

    assert result.created is True
    assert [r.status for r in fake.cluster.requests if r.method == "POST"] == [500, 500, 201]
    assert sleeps.calls == [0.1, 0.2]


def test_given_a_persistent_503_when_submitting_then_a_clear_error_after_bounded_retries(
    fake: FakeApiServer, caller: ApiCaller, request_obj: EvalRequest
) -> None:
    evals, _ = _eval_and_probe(request_obj)
    fake.cluster.fail_next("POST", "jobs", 503, times=10)

    with pytest.raises(ClusterUnreachableError, match="did not answer after 3 attempts"):
        KubernetesSubmitter(caller).submit(evals[0])
    assert fake.cluster.count("POST", "jobs") == 3


def test_given_no_server_listening_when_submitting_then_cluster_unreachable(
    request_obj: EvalRequest, policy: RetryPolicy
) -> None:
    with FakeApiServer() as gone:
        url = gone.url
    caller = ApiCaller(api_client_for_url(url, token="t"), policy=policy)
    evals, _ = _eval_and_probe(request_obj)

    with pytest.raises(ClusterUnreachableError, match="check that the cluster endpoint is reachable"):
        KubernetesSubmitter(caller).submit(evals[0])


def test_given_a_stale_eks_token_when_the_server_says_401_then_one_refresh_and_retry(
    fake: FakeApiServer, request_obj: EvalRequest, policy: RetryPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    # botocore signs with the wall clock at second resolution; step it so each token is distinct.
    ticks = iter(range(10_000))
    base = botocore.auth.get_current_datetime()
    monkeypatch.setattr(
        botocore.auth, "get_current_datetime", lambda: base.replace(microsecond=0) + _seconds(next(ticks))
    )
    sts = _static_sts()
    tokens = EksTokenProvider(sts, "rlinf-cluster")
    caller = api_client_for_endpoint(
        ClusterEndpoint(name="rlinf-cluster", endpoint=fake.url, ca_pem=b""), tokens, policy=policy
    )
    fake.cluster.require_eks_token = True
    fake.cluster.rejected_tokens.add(tokens.token())  # e.g. signed before a clock jump, or role changed
    evals, _ = _eval_and_probe(request_obj)

    KubernetesSubmitter(caller).submit(evals[0])

    posts = [r for r in fake.cluster.requests if r.method == "POST"]
    assert [r.status for r in posts] == [401, 201]
    assert posts[0].token != posts[1].token
    assert tokens.minted == 2


def test_given_a_token_the_server_never_accepts_when_calling_then_401_is_not_retried_forever(
    fake: FakeApiServer, request_obj: EvalRequest, policy: RetryPolicy
) -> None:
    caller = ApiCaller(api_client_for_url(fake.url, token="bad"), policy=policy, refresh_token=lambda: "still-bad")
    fake.cluster.rejected_tokens.update({"bad", "still-bad"})
    evals, _ = _eval_and_probe(request_obj)

    with pytest.raises(KubernetesError, match=r"401.*access entry"):
        KubernetesSubmitter(caller).submit(evals[0])
    assert fake.cluster.count("POST", "jobs") == 2


def test_given_a_401_then_503s_when_submitting_then_the_token_refresh_does_not_use_up_a_retry(
    fake: FakeApiServer, request_obj: EvalRequest, policy: RetryPolicy, sleeps: SleepRecorder
) -> None:
    caller = ApiCaller(api_client_for_url(fake.url, token="stale"), policy=policy, refresh_token=lambda: "fresh")
    fake.cluster.rejected_tokens.add("stale")
    fake.cluster.fail_next("POST", "jobs", 503, times=policy.attempts - 1)
    evals, _ = _eval_and_probe(request_obj)

    KubernetesSubmitter(caller).submit(evals[0])

    posts = [r.status for r in fake.cluster.requests if r.method == "POST"]
    assert posts == [401] + [503] * (policy.attempts - 1) + [201]  # 3 attempts, the refresh on top
    assert sleeps.calls == policy.delays()


def test_given_an_oom_killed_pod_when_asking_status_then_failed_with_oomkilled_and_logs_tail(
    fake: FakeApiServer, caller: ApiCaller, request_obj: EvalRequest
) -> None:
    evals, _ = _eval_and_probe(request_obj)
    sub = KubernetesSubmitter(caller)
    b = evals[0]
    sub.submit(b)
    fake.cluster.set_job_status(
        b.namespace,
        b.name,
        {
            "failed": 1,
            "conditions": [
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "BackoffLimitExceeded",
                    "message": "Job has reached the specified backoff limit",
                }
            ],
        },
    )
    fake.cluster.add_pod(
        b.namespace,
        b.name,
        f"{b.name}-abcde",
        {
            "phase": "Failed",
            "containerStatuses": [
                {
                    "name": "eval",
                    "image": "x",
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
                }
            ],
        },
        log="\n".join(f"line {i}" for i in range(50)),
    )

    status = sub.status(b.name, b.namespace)
    tail = sub.logs(b.name, b.namespace, tail_lines=3)

    assert status.state == JobState.FAILED
    assert status.reason == "OOMKilled"
    assert status.exit_code == 137
    assert "BackoffLimitExceeded" in status.message
    assert tail == "line 47\nline 48\nline 49"


def test_given_the_server_rejects_the_manifest_when_submitting_then_422_is_a_clear_error(
    fake: FakeApiServer, caller: ApiCaller, request_obj: EvalRequest
) -> None:
    # e.g. an admission policy of the cluster refusing the pod; our own checks passed.
    evals, _ = _eval_and_probe(request_obj)
    fake.cluster.fail_next("POST", "jobs", 422)

    with pytest.raises(KubernetesError, match=r"422.*render-jobs"):
        KubernetesSubmitter(caller).submit(evals[0])
    assert fake.cluster.count("POST", "jobs") == 1  # a 4xx is not retried


def _seconds(n: int):  # type: ignore[no-untyped-def]
    import datetime

    return datetime.timedelta(seconds=n)


def _static_sts():  # type: ignore[no-untyped-def]
    session = botocore.session.Session()
    session.set_credentials("AKIAFAKEFAKEFAKEFAKE", "fake-secret-key-for-tests-only")
    return session.create_client("sts", region_name="us-east-1")


def test_given_an_empty_token_config_when_building_a_url_client_then_no_auth_header_is_sent(
    fake: FakeApiServer,
) -> None:
    caller = ApiCaller(api_client_for_url(fake.url), policy=RetryPolicy(attempts=1))

    with pytest.raises(KubernetesError, match="401"):
        caller.call("list jobs", k8s.BatchV1Api(caller.api_client).list_namespaced_job, "rlinf-eval")


def test_given_a_kubeconfig_for_any_cluster_when_submitting_then_the_token_from_it_is_used(
    fake: FakeApiServer, request_obj: EvalRequest, tmp_path: Path
) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "lab", "cluster": {"server": fake.url}}],
                "users": [{"name": "me", "user": {"token": "kubeconfig-token"}}],
                "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "me", "namespace": "rlinf-eval"}}],
                "current-context": "lab",
            }
        )
    )
    evals, _ = _eval_and_probe(request_obj)

    caller = api_client_from_kubeconfig(str(kubeconfig), context="lab")
    KubernetesSubmitter(caller).submit(evals[0])

    assert fake.cluster.requests[-1].token == "kubeconfig-token"
    assert len(fake.cluster.objects["jobs"]) == 1


def test_given_a_missing_kubeconfig_context_then_a_config_error(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n")

    with pytest.raises(ConfigError, match="cannot load kubeconfig"):
        api_client_from_kubeconfig(str(kubeconfig), context="nope")
