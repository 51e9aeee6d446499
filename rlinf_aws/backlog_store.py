"""The backlog's store in DynamoDB: the intake's idempotency table, under keys of its own.

Two kinds of item, beside Powertools' ``checkpoint_router.start#…`` records (which carry an ``expiration``;
these do not, so the table's TTL leaves them):

- ``backlog#ckpt#<checkpoint uri>``: state (held | starting | started | superseded | finished | backfilled),
  reason, step, the ref;
- ``backlog#run#<run>``: ``held`` and ``running`` (string sets of checkpoint URIs) of one training run, known
  by its whole identity (``s3://bucket/alice/ppo/checkpoints``, rlinf_bench.intake.backlog.run_of).

Every write is conditional, and a state change moves the checkpoint between its run's sets in the same
transaction (taking a running slot only while fewer than the limit are running), so two containers (or a
redelivered end event) can never start and supersede the same checkpoint, and a slot is freed exactly when
its checkpoint leaves ``starting``/``started``. Decisions recorded per experiment name
(``backlog#exp#…``, before runs were known by their whole prefix) are not read: ``backfill --superseded``
evaluates checkpoints such a table still holds.
"""

from __future__ import annotations

from typing import Any

from rlinf_bench.intake.backlog import RUNNING, Entry, State, run_of

CKPT = "backlog#ckpt#"
RUN = "backlog#run#"
_NAMES = {"#s": "state", "#r": "reason"}


def _failed(exc: Exception) -> bool:
    """Whether ``exc`` says a condition did not hold (an answer), not that the write could not be tried."""
    response = getattr(exc, "response", None) or {}
    code = str(response.get("Error", {}).get("Code", ""))
    if code == "ConditionalCheckFailedException":
        return True
    if code != "TransactionCanceledException":
        return False
    # A transaction cancelled by a conflicting one or by throttling is no answer: it raises, and is retried.
    reasons = [str(r.get("Code")) for r in response.get("CancellationReasons") or []]
    return all(r in ("None", "ConditionalCheckFailed") for r in reasons)


def _set_of(state: State) -> str:
    """Which set of its run a checkpoint in ``state`` belongs to ('' for none)."""
    return "held" if state is State.HELD else "running" if state in RUNNING else ""


class DynamoBacklogStore:
    """:class:`rlinf_bench.intake.backlog.BacklogStore` over one DynamoDB table (key ``id``)."""

    def __init__(self, dynamodb: Any, table: str) -> None:
        self.db = dynamodb
        self.table = table

    def _item(self, entry: Entry) -> dict[str, Any]:
        return {
            "id": {"S": CKPT + entry.uri},
            "uri": {"S": entry.uri},
            "experiment": {"S": entry.experiment},
            "global_step": {"N": str(entry.global_step)},
            "state": {"S": entry.state.value},
            "reason": {"S": entry.reason or "-"},
            "checkpoint_json": {"S": entry.checkpoint_json or "{}"},
        }

    @staticmethod
    def _entry(item: dict[str, Any]) -> Entry:
        return Entry(
            uri=item["uri"]["S"],
            experiment=item["experiment"]["S"],
            global_step=int(item["global_step"]["N"]),
            state=State(item["state"]["S"]),
            reason=item["reason"]["S"],
            checkpoint_json=item["checkpoint_json"]["S"],
        )

    def _move(self, uri: str, leave: str, enter: str, limit: int) -> list[dict[str, Any]]:
        """The update of the run's sets that moves ``uri`` from set ``leave`` to ``enter`` ('' for none)."""
        if leave == enter:
            return []
        clauses = ([f"ADD {enter} :u"] if enter else []) + ([f"DELETE {leave} :u"] if leave else [])
        update: dict[str, Any] = {
            "TableName": self.table,
            "Key": {"id": {"S": RUN + run_of(uri)}},
            "UpdateExpression": " ".join(clauses),
            "ExpressionAttributeValues": {":u": {"SS": [uri]}},
        }
        if enter == "running" and limit:
            update["ConditionExpression"] = "attribute_not_exists(running) OR size(running) < :limit"
            update["ExpressionAttributeValues"][":limit"] = {"N": str(limit)}
        return [{"Update": update}]

    def create(self, entry: Entry) -> bool:
        put = {
            "Put": {
                "TableName": self.table,
                "Item": self._item(entry),
                "ConditionExpression": "attribute_not_exists(id)",
            }
        }
        return self._transact([put, *self._move(entry.uri, "", _set_of(entry.state), 0)])

    def get(self, uri: str) -> Entry | None:
        item = self.db.get_item(TableName=self.table, Key={"id": {"S": CKPT + uri}}, ConsistentRead=True).get("Item")
        return self._entry(item) if item else None

    def transition(self, uri: str, old: State, new: State, reason: str, *, limit: int = 0) -> bool:
        update = {
            "Update": {
                "TableName": self.table,
                "Key": {"id": {"S": CKPT + uri}},
                "UpdateExpression": "SET #s = :new, #r = :reason",
                "ConditionExpression": "#s = :old",
                "ExpressionAttributeNames": _NAMES,
                "ExpressionAttributeValues": {
                    ":new": {"S": new.value},
                    ":old": {"S": old.value},
                    ":reason": {"S": reason or "-"},
                },
            }
        }
        return self._transact([update, *self._move(uri, _set_of(old), _set_of(new), limit)])

    def _members(self, run: str, name: str) -> list[Entry]:
        item = self.db.get_item(TableName=self.table, Key={"id": {"S": RUN + run}}, ConsistentRead=True)
        uris = item.get("Item", {}).get(name, {}).get("SS", [])
        return [e for e in (self.get(uri) for uri in sorted(uris)) if e is not None]

    def held(self, run: str) -> list[Entry]:
        return [e for e in self._members(run, "held") if e.state is State.HELD]

    def running(self, run: str) -> list[Entry]:
        return [e for e in self._members(run, "running") if e.state in RUNNING]

    def entries(self) -> list[Entry]:
        """Every checkpoint the backlog decided on (a scan: for ``status``, not the hot path)."""
        out: list[Entry] = []
        for page in self.db.get_paginator("scan").paginate(
            TableName=self.table,
            FilterExpression="begins_with(id, :p)",
            ExpressionAttributeValues={":p": {"S": CKPT}},
        ):
            out += [self._entry(item) for item in page.get("Items", [])]
        return sorted(out, key=lambda e: (e.experiment, e.global_step))

    def _transact(self, items: list[dict[str, Any]]) -> bool:
        try:
            self.db.transact_write_items(TransactItems=items)
        except Exception as exc:
            if _failed(exc):
                return False
            raise
        return True
