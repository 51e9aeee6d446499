"""`status --compute`: each Kueue Job as queued (how long, behind which queue, preempted or not), running, done."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.state_plan import resolve_request
from rlinf_k8s.queue_sentinel import JobPhase, QueuedJob
from rlinf_local.status_command import format_jobs
from tests.unit.k8s.conftest import make_request

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def _job(name: str, phase: JobPhase, *, waited_min: int = 0, preempted: bool = False) -> QueuedJob:
    return QueuedJob(
        name=name,
        namespace="rlinf-eval",
        queue="rlinf-eval",
        phase=phase,
        waiting_since=NOW - timedelta(minutes=waited_min),
        limit_min=120,
        preempted=preempted,
        token="secret-token",
    )


def test_given_jobs_in_each_phase_then_status_shows_queued_running_done_with_the_queue_and_preemption() -> None:
    text = format_jobs(
        [
            _job("eval-a", JobPhase.QUEUED, waited_min=42),
            _job("eval-b", JobPhase.QUEUED, waited_min=7, preempted=True),
            _job("eval-c", JobPhase.RUNNING),
            _job("eval-d", JobPhase.DONE),
            _job("eval-e", JobPhase.FAILED),
        ],
        now=NOW,
    )
    lines = {line.split()[0]: line for line in text.splitlines()[1:]}
    assert "queued for 42 min behind rlinf-eval" in lines["eval-a"]
    assert "preempted (Kueue requeued it); queued for 7 min" in lines["eval-b"]
    assert lines["eval-c"].split()[1] == "running" and lines["eval-d"].split()[1] == "done"
    assert lines["eval-e"].split()[1] == "failed"
    assert "secret-token" not in text and "secret-token" not in repr(_job("x", JobPhase.QUEUED))


def test_given_the_stacks_default_queue_then_a_request_without_kueue_gets_it_and_one_with_keeps_its_own() -> None:
    settings = PipelineSettings(
        kueue_queue="rlinf-eval", kueue_priority_class="rlinf-eval-low", kueue_queue_limit_min=45
    )
    resolved = resolve_request(make_request(), settings)
    assert resolved.kueue is not None and resolved.kueue.queue == "rlinf-eval"
    assert resolved.queue_allowance_s() == 45 * 60
    own = make_request(kueue={"queue": "team-b"})
    assert resolve_request(own, settings).kueue == own.kueue
    assert resolve_request(make_request(), PipelineSettings()).kueue is None
