"""Jobs admitted through Kueue: created suspended, with the queue and priority labels; without it, unchanged."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from rlinf_bench.contracts import CheckpointLayout, CheckpointRef, EvalRequest, KueueSettings, SuiteSelection
from rlinf_k8s.jobs import jobs_for_request
from rlinf_k8s.jobspec import KUEUE_PRIORITY_LABEL, KUEUE_QUEUE_LABEL, QUEUE_LIMIT_ANNOTATION
from rlinf_k8s.render_manifests import bundle_yaml
from tests.unit.k8s.conftest import make_request

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("RLINF_BENCH_UPDATE_GOLDEN") == "1"
KUEUE = KueueSettings(queue="rlinf-eval", priority_class="rlinf-eval-low", queue_limit_min=90)


def _eval_request(**overrides: object) -> EvalRequest:
    return make_request(
        checkpoint=CheckpointRef(
            uri="s3://rlinf-ckpts/libero10-rl/checkpoints/global_step_250",
            experiment="libero10-rl",
            global_step=250,
            layout=CheckpointLayout.FSDP_DCP,  # as the intake found it
        ),
        suites=[SuiteSelection(name="libero_10", tasks=[0, 1], max_steps=520)],
        runs=1,
        seeds=[7],
        probes=[],
        **overrides,
    )


def test_given_kueue_settings_then_every_job_is_suspended_with_the_queue_and_priority_labels() -> None:
    req = make_request(kueue=KUEUE)
    manifests = [m for b in jobs_for_request(req) for m in b.manifests() if m["kind"] == "Job"]
    assert manifests, "the request has Jobs"
    for job in manifests:
        assert job["spec"]["suspend"] is True, job["metadata"]["name"]
        assert job["metadata"]["labels"][KUEUE_QUEUE_LABEL] == "rlinf-eval"
        assert job["metadata"]["labels"][KUEUE_PRIORITY_LABEL] == "rlinf-eval-low"
        assert job["metadata"]["annotations"][QUEUE_LIMIT_ANNOTATION] == "90"


def test_given_no_kueue_settings_then_the_jobs_are_those_of_before() -> None:
    plain = [bundle_yaml(b) for b in jobs_for_request(make_request())]
    assert all("suspend" not in text and "kueue.x-k8s.io" not in text for text in plain)
    # The golden files of tests/unit/k8s/test_k8s_golden.py pin the exact bytes of this case.


def test_given_a_queue_without_priority_then_only_the_queue_label_is_set() -> None:
    req = make_request(kueue=KueueSettings(queue="team-a"))
    job = jobs_for_request(req)[0].manifests()[-1]
    assert job["metadata"]["labels"][KUEUE_QUEUE_LABEL] == "team-a"
    assert KUEUE_PRIORITY_LABEL not in job["metadata"]["labels"]


@pytest.mark.parametrize("bad", ["Team-A", "rlinf_eval", "-x", "a" * 64, "rlinf-eval\n", ""])
def test_given_a_queue_name_kubernetes_would_refuse_then_the_request_is_refused_naming_the_field(bad: str) -> None:
    with pytest.raises(ValidationError, match=r"kueue\.queue"):
        make_request(kueue={"queue": bad})


def test_given_kueue_then_the_matrix_digest_is_unchanged() -> None:
    assert make_request(kueue=KUEUE).digest() == make_request().digest()


def test_given_a_queueing_limit_longer_than_queue_s_then_the_state_allows_it() -> None:
    assert make_request().queue_allowance_s() == 1800
    assert make_request(kueue=KueueSettings(queue="q", queue_limit_min=120)).queue_allowance_s() == 7200


def test_given_the_fixed_kueue_request_then_the_rendered_yaml_matches_the_golden_file() -> None:
    rendered = bundle_yaml(jobs_for_request(_eval_request(kueue=KUEUE))[0])
    path = GOLDEN / "eval-job-kueue.yaml"
    if UPDATE:
        path.write_text(rendered)
    assert path.exists(), f"missing {path}; create it with RLINF_BENCH_UPDATE_GOLDEN=1"
    assert rendered == path.read_text(), "eval-job-kueue.yaml changed; review, then regenerate"
