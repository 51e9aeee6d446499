"""A router, its backlog and Step Functions with faults injected at every external call, for property tests.

Every call to the outside (the backlog store's reads and writes, the bucket listing, DescribeExecution and
StartExecution) may fail, at a rate the test draws: throttled before it acts, or its answer lost after it
acted (a timeout on a write that went through). A delivery that raised comes back later, as SQS
redelivers a message and Lambda retries an asynchronous event; once the plan is spent every call succeeds,
which is when the test settles everything and checks what happened.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from rlinf_aws.execution_starter import ExecutionStarter
from rlinf_bench.checkpoints.listing import StoredObject
from rlinf_bench.contracts.request import EvalRequest
from rlinf_bench.intake.backlog import Backlog, Entry, MemoryStore, State
from rlinf_bench.intake.config import IntakeConfig
from rlinf_bench.intake.router import Router
from tests.synthetic_checkpoints import fsdp_objects

T0 = datetime(2026, 12, 1, tzinfo=UTC)
BUCKET = "bkt"
MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:eval"
OK, THROTTLED, LOST = 0, 1, 2


class Faults:
    """The plan: each external call fails with probability ``rate``, half throttled, half its answer lost."""

    def __init__(self, rate: float, rng: random.Random) -> None:
        self.rate, self.rng = rate, rng
        self.calls = 0

    def next(self) -> int:
        self.calls += 1
        if self.rate and self.rng.random() < self.rate:
            return self.rng.choice((THROTTLED, LOST))
        return OK

    def spend(self) -> None:
        self.rate = 0.0

    def call(self, operation: str, act: Callable[[], Any], *, writes: bool = True) -> Any:
        """Run ``act`` under the next fault (a read's answer is never 'lost' after acting: it is throttled)."""
        fault = self.next()
        if fault == THROTTLED or (fault == LOST and not writes):
            raise throttled(operation)
        result = act()
        if fault == LOST:
            raise ClientError({"Error": {"Code": "RequestTimeout", "Message": "no answer"}}, operation)
        return result


def throttled(operation: str) -> ClientError:
    return ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, operation)


class FaultyMemoryStore(MemoryStore):
    """The in-process backlog store with every read and write going through the fault plan."""

    def __init__(self, faults: Faults) -> None:
        super().__init__()
        self.faults = faults

    def create(self, entry: Entry) -> bool:
        return bool(self.faults.call("PutItem", lambda: super(FaultyMemoryStore, self).create(entry)))

    def get(self, uri: str) -> Entry | None:
        found: Entry | None = self.faults.call("GetItem", lambda: super(FaultyMemoryStore, self).get(uri), writes=False)
        return found

    def transition(self, uri: str, old: State, new: State, reason: str, *, limit: int = 0) -> bool:
        move = super().transition
        return bool(self.faults.call("TransactWriteItems", lambda: move(uri, old, new, reason, limit=limit)))

    def held(self, run: str) -> list[Entry]:
        found: list[Entry] = self.faults.call("GetItem", lambda: super(FaultyMemoryStore, self).held(run), writes=False)
        return found

    def running(self, run: str) -> list[Entry]:
        found: list[Entry] = self.faults.call(
            "GetItem", lambda: super(FaultyMemoryStore, self).running(run), writes=False
        )
        return found


class FaultyClient:
    """A boto3 client whose every call goes through the fault plan (the DynamoDB store on moto)."""

    def __init__(self, client: Any, faults: Faults) -> None:
        self._client, self._faults = client, faults

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if name == "get_paginator":
            return method

        def call(**kwargs: Any) -> Any:
            return self._faults.call(name, lambda: method(**kwargs), writes=not name.startswith(("get", "describe")))

        return call


@dataclass
class Execution:
    name: str
    checkpoint: str
    run: str
    status: str = "RUNNING"


class StepFunctions:
    """Step Functions' naming rules: one execution per name; a repeated start of a running one with the same
    input answers as the first did, of a closed one ExecutionAlreadyExists."""

    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self.executions: dict[str, Execution] = {}

    def describe_execution(self, *, executionArn: str) -> dict[str, Any]:
        def look() -> dict[str, Any]:
            found = self.executions.get(executionArn.rsplit(":", 1)[-1])
            if found is None:
                raise ClientError({"Error": {"Code": "ExecutionDoesNotExist", "Message": "-"}}, "DescribeExecution")
            return {"status": found.status}

        return dict(self.faults.call("DescribeExecution", look, writes=False))

    def start_execution(self, *, stateMachineArn: str, name: str, input: str) -> dict[str, Any]:
        def start() -> dict[str, Any]:
            found = self.executions.get(name)
            if found is not None and found.status != "RUNNING":
                raise ClientError({"Error": {"Code": "ExecutionAlreadyExists", "Message": "-"}}, "StartExecution")
            if found is None:
                ref = EvalRequest.from_json(input).checkpoint
                self.executions[name] = Execution(name, ref.uri, ref.uri.rsplit("/", 1)[0])
            return {"executionArn": f"{MACHINE}:{name}"}

        return dict(self.faults.call("StartExecution", start))

    def running(self) -> list[Execution]:
        return [e for e in self.executions.values() if e.status == "RUNNING"]


class Bucket:
    """Complete checkpoints by root URI; listing them goes through the fault plan."""

    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self.roots: set[str] = set()

    def list(self, root_uri: str) -> list[StoredObject]:
        objects = [StoredObject(rel, size, T0) for rel, size in fsdp_objects(2)]
        return list(self.faults.call("ListObjectsV2", lambda: objects if root_uri in self.roots else [], writes=False))


@dataclass
class Harness:
    """The router over a faulty store, bucket and Step Functions; deliveries that raised wait to come back."""

    config: IntakeConfig
    faults: Faults
    store: Any
    sfn: StepFunctions
    bucket: Bucket
    router: Router = field(init=False)
    pending: list[tuple[str, str]] = field(default_factory=list)  # ("arrive", body) | ("end", checkpoint uri)
    arrived: set[str] = field(default_factory=set)
    letters: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        starter = ExecutionStarter(self.sfn, MACHINE)
        self.router = Router(
            config=self.config,
            lister=self.bucket,
            start_once=lambda ref, request: starter.start(request).to_dict(),
            dead_letters=self,
            clock=lambda: T0 + timedelta(hours=1),
            backlog=Backlog(self.config.backlog, self.store),
        )

    def send(self, body: str, reason: str, *, letter_id: str) -> None:  # the DLQ
        self.letters.append(reason)

    def arrive(self, run: str, step: int) -> None:
        """A checkpoint's last file lands (again, for a step seen before: a duplicate event)."""
        root = f"{run}/checkpoints/global_step_{step}"
        self.bucket.roots.add(f"s3://{BUCKET}/{root}")
        self.arrived.add(f"s3://{BUCKET}/{root}")
        key = f"{root}/actor/model_state_dict/full_weights.pt"
        record = {"eventName": "ObjectCreated:Put", "s3": {"bucket": {"name": BUCKET}, "object": {"key": key}}}
        self.deliver(("arrive", json.dumps({"Records": [record]})))

    def end(self, pick: int) -> None:
        """One of the running executions ends (succeeds); its end event is delivered."""
        running = self.sfn.running()
        if running:
            execution = running[pick % len(running)]
            execution.status = "SUCCEEDED"
            self.deliver(("end", execution.checkpoint))

    def retry(self, pick: int) -> None:
        if self.pending:
            self.deliver(self.pending.pop(pick % len(self.pending)))

    def deliver(self, delivery: tuple[str, str]) -> None:
        kind, payload = delivery
        try:
            if kind == "arrive":
                self.router.route(payload)
            else:
                self.router.execution_ended(payload)
        except ClientError:
            self.pending.append(delivery)  # SQS redelivers the message; Lambda retries the async event

    def settle(self, rounds: int = 200) -> None:
        """Spend the fault plan, deliver what waits, and end every execution, until nothing runs or waits."""
        self.faults.spend()
        for _ in range(rounds):
            while self.pending:
                self.deliver(self.pending.pop(0))
            if not self.sfn.running():
                return
            self.end(0)
        raise AssertionError(f"still running after {rounds} rounds: {self.sfn.running()}")
