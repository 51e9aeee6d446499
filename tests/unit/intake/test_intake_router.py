"""Router decisions with in-memory collaborators (the moto tests cover the AWS side)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from rlinf_aws.s3_objects import S3Objects
from rlinf_bench.checkpoints.listing import CheckpointLister, StoredObject
from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.contracts.request import EvalRequest
from rlinf_bench.intake.config import IntakeConfig
from rlinf_bench.intake.router import Outcome, Router
from tests.synthetic_checkpoints import fsdp_objects

T0 = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)
ROOT = "runs/e/checkpoints/global_step_10"


class Bucket:
    """Objects by root URI; counts listings so tests can see which events cost one."""

    def __init__(self) -> None:
        self.roots: dict[str, list[StoredObject]] = {}
        self.listings = 0

    def put_checkpoint(self, root_uri: str, objects: list[tuple[str, int]]) -> None:
        self.roots[root_uri] = [StoredObject(rel, size, T0) for rel, size in objects]

    def list(self, root_uri: str) -> list[StoredObject]:
        self.listings += 1
        return list(self.roots.get(root_uri, []))


class Executions:
    def __init__(self) -> None:
        self.started: dict[str, EvalRequest] = {}

    def start_once(self, ref: CheckpointRef, request: EvalRequest) -> dict[str, Any]:
        already = request.request_id in self.started
        self.started.setdefault(request.request_id, request)
        return {"name": request.request_id, "execution_arn": "arn", "already_started": already}


class Dlq:
    def __init__(self) -> None:
        self.letters: list[tuple[str, str]] = []

    def send(self, body: str, reason: str, *, letter_id: str) -> None:
        self.letters.append((body, reason))


def make(now: datetime, **config: Any) -> tuple[Router, Bucket, Executions, Dlq]:
    bucket, executions, dlq = Bucket(), Executions(), Dlq()
    router = Router(
        config=IntakeConfig(**{"quiet_period_s": 60, **config}),
        lister=bucket,
        start_once=executions.start_once,
        dead_letters=dlq,
        clock=lambda: now,
    )
    return router, bucket, executions, dlq


def classic(*keys: str) -> str:
    return json.dumps(
        {
            "Records": [
                {"eventName": "ObjectCreated:Put", "s3": {"bucket": {"name": "bkt"}, "object": {"key": k}}}
                for k in keys
            ]
        }
    )


def test_given_shard_events_then_they_are_filtered_without_listing_the_bucket() -> None:
    router, bucket, executions, _ = make(T0)
    results = router.route(classic(*(f"{ROOT}/actor/dcp_checkpoint/__{r}_0.distcp" for r in range(50))))
    assert {r.outcome for r in results} == {Outcome.FILTERED} and bucket.listings == 0 and not executions.started


def test_given_a_complete_checkpoint_then_one_start_and_duplicates_say_so() -> None:
    router, bucket, executions, _ = make(T0 + timedelta(seconds=61))
    bucket.put_checkpoint(f"s3://bkt/{ROOT}", fsdp_objects(4))
    body = classic(f"{ROOT}/actor/model_state_dict/full_weights.pt")

    outcomes = [router.route(body)[0].outcome for _ in range(3)]

    assert outcomes == [Outcome.STARTED, Outcome.DUPLICATE, Outcome.DUPLICATE]
    assert bucket.listings == 1  # duplicates in the same container cost no listing
    [request] = executions.started.values()
    assert request.checkpoint.uri == f"s3://bkt/{ROOT}" and request.checkpoint.global_step == 10


def test_given_one_bad_key_among_records_then_it_is_dead_lettered_and_the_others_still_route() -> None:
    router, bucket, _, dlq = make(T0 + timedelta(seconds=61))
    bucket.put_checkpoint(f"s3://bkt/{ROOT}", fsdp_objects(4))
    body = classic("runs/../etc/passwd", f"{ROOT}/actor/model_state_dict/full_weights.pt")

    results = router.route(body)

    assert [r.outcome for r in results] == [Outcome.DEAD_LETTERED, Outcome.STARTED]
    assert dlq.letters == [
        (body, "object key 'runs/../etc/passwd' contains a '.' or '..' path segment (path traversal)")
    ]


def test_given_an_incomplete_checkpoint_then_it_is_deferred_until_max_age_then_dead_lettered() -> None:
    first_seen = T0
    young, bucket, _, dlq = make(T0 + timedelta(hours=1), max_age_s=7200)
    bucket.put_checkpoint(f"s3://bkt/{ROOT}", fsdp_objects(4)[:-2])  # no weights, no metadata
    body = classic(f"{ROOT}/actor/model_state_dict/full_weights.pt")

    [deferred] = young.route(body, first_seen=first_seen)
    old, old_bucket, _, old_dlq = make(T0 + timedelta(hours=3), max_age_s=7200)
    old_bucket.roots = bucket.roots
    [dead] = old.route(body, first_seen=first_seen)

    assert deferred.outcome is Outcome.DEFERRED and not deferred.waiting_for_quiet and not dlq.letters
    assert dead.outcome is Outcome.DEAD_LETTERED
    assert "still incomplete 10800s after its event (max_age_s=7200)" in old_dlq.letters[0][1]
    assert "missing actor/dcp_checkpoint/.metadata, actor/model_state_dict/full_weights.pt" in old_dlq.letters[0][1]


class FailingLister:
    """A bucket the listing always fails on, with ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error, self.listings = error, 0

    def list(self, root_uri: str) -> list[StoredObject]:
        self.listings += 1
        raise self.error


class Letters:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str, str]] = []  # (letter id, body, reason)

    def send(self, body: str, reason: str, *, letter_id: str) -> None:
        self.sent.append((letter_id, body, reason))


def router_with(lister: Any, now: datetime, **config: Any) -> tuple[Router, Letters]:
    letters = Letters()
    router = Router(
        config=IntakeConfig(**{"quiet_period_s": 60, **config}),
        lister=lister,
        start_once=Executions().start_once,
        dead_letters=letters,
        clock=lambda: now,
    )
    return router, letters


class S3Error(Exception):
    """A botocore ClientError as the S3 object store reads it (the error code in ``response``)."""

    def __init__(self, code: str) -> None:
        super().__init__(f"An error occurred ({code}) when calling the ListObjectsV2 operation")
        self.response = {"Error": {"Code": code}}


class Paginated:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def get_paginator(self, name: str) -> Any:
        return self

    def paginate(self, **kwargs: Any) -> Any:
        raise self.error


def test_given_a_bucket_that_does_not_exist_then_the_record_is_dead_lettered_at_first_sight_not_retried() -> None:
    router, letters = router_with(CheckpointLister(S3Objects(Paginated(S3Error("NoSuchBucket")))), T0)
    body = classic(f"{ROOT}/actor/model_state_dict/full_weights.pt")

    [result] = router.route(body, first_seen=T0, message_id="m-1")  # age 0: well inside max_age_s

    assert result.outcome is Outcome.DEAD_LETTERED and "NoSuchBucket" in result.reason
    assert [(i, b) for i, b, _ in letters.sent] == [("m-1#record-0", body)]


def test_given_a_transient_listing_error_then_it_is_retried_until_max_age_then_dead_lettered_with_the_error() -> None:
    body = classic(f"{ROOT}/actor/model_state_dict/full_weights.pt")
    young, young_letters = router_with(
        CheckpointLister(S3Objects(Paginated(S3Error("SlowDown")))), T0 + timedelta(minutes=5)
    )
    with pytest.raises(S3Error, match="SlowDown"):  # the message comes back after its visibility timeout
        young.route(body, first_seen=T0, message_id="m-1")
    assert young_letters.sent == []

    old, old_letters = router_with(CheckpointLister(S3Objects(Paginated(S3Error("SlowDown")))), T0 + timedelta(hours=7))
    [dead] = old.route(body, first_seen=T0, message_id="m-1")

    assert dead.outcome is Outcome.DEAD_LETTERED
    assert "kept failing 25200s after its event (max_age_s=21600): S3Error: An error occurred (SlowDown)" in dead.reason
    assert [reason for _, _, reason in old_letters.sent] == [dead.reason]


def test_given_one_bad_and_one_pending_record_when_received_three_times_then_one_dlq_copy_and_still_pending() -> None:
    bucket = Bucket()
    router, letters = router_with(bucket, T0 + timedelta(seconds=61))
    bucket.put_checkpoint(f"s3://bkt/{ROOT}", fsdp_objects(4)[:-2])  # incomplete: the second record waits
    body = classic("runs/../etc/passwd", f"{ROOT}/actor/model_state_dict/full_weights.pt")

    receives = [router.route(body, first_seen=T0, message_id="m-7") for _ in range(3)]

    assert [[r.outcome for r in results] for results in receives] == [[Outcome.DEAD_LETTERED, Outcome.DEFERRED]] * 3
    assert [(i, b) for i, b, _ in letters.sent] == [("m-7#record-0", body)]


def test_given_an_unreadable_body_received_twice_then_it_is_dead_lettered_once_and_never_raises() -> None:
    router, letters = router_with(FailingLister(AssertionError("no listing for an unreadable body")), T0)
    body = "[" * 5000 + "]" * 5000

    receives = [router.route(body, message_id="m-9") for _ in range(2)]

    assert [[r.outcome for r in results] for results in receives] == [[Outcome.DEAD_LETTERED]] * 2
    assert [(i, r) for i, _, r in letters.sent] == [("m-9#body", receives[0][0].reason)]
    assert "nests deeper than 32 levels" in receives[0][0].reason


class RefusingStepFunctions:
    """Step Functions refusing every StartExecution with ``code`` (an execution name or input it never takes)."""

    def __init__(self, code: str) -> None:
        self.code, self.calls = code, 0

    def describe_execution(self, **kwargs: Any) -> Any:
        raise S3Error("ExecutionDoesNotExist")

    def start_execution(self, **kwargs: Any) -> Any:
        self.calls += 1
        raise S3Error(self.code)


@pytest.mark.parametrize("code", ["InvalidName", "InvalidExecutionInput", "ValidationException"])
def test_given_step_functions_refuses_the_request_then_it_is_dead_lettered_once_at_first_sight_not_retried(
    code: str,
) -> None:
    from rlinf_aws.execution_starter import ExecutionStarter

    sfn = RefusingStepFunctions(code)
    starter = ExecutionStarter(sfn, "arn:aws:states:us-east-1:123456789012:stateMachine:eval")
    bucket, letters = Bucket(), Letters()
    bucket.put_checkpoint(f"s3://bkt/{ROOT}", fsdp_objects(4))
    router = Router(
        config=IntakeConfig(quiet_period_s=60),
        lister=bucket,
        start_once=lambda ref, request: starter.start(request).to_dict(),
        dead_letters=letters,
        clock=lambda: T0 + timedelta(seconds=61),
    )
    body = classic(f"{ROOT}/actor/model_state_dict/full_weights.pt")

    receives = [router.route(body, first_seen=T0, message_id="m-3") for _ in range(2)]  # age 61 s: no max_age yet

    assert [[r.outcome for r in results] for results in receives] == [[Outcome.DEAD_LETTERED]] * 2
    assert [i for i, _, _ in letters.sent] == ["m-3#record-0"]
    assert "Step Functions refused execution" in letters.sent[0][2] and code in letters.sent[0][2]
