"""The backlog's store in DynamoDB: the intake's idempotency table, under keys of its own.

Two kinds of item, beside Powertools' ``checkpoint_router.start#…`` records (which carry an ``expiration``;
these do not, so the table's TTL leaves them):

- ``backlog#ckpt#<checkpoint uri>``: state (held | started | superseded | finished), reason, step, the ref;
- ``backlog#exp#<experiment>``: ``taken`` (running slots) and ``held`` (a string set of held URIs).

Every write is conditional and a state change moves the held set in the same transaction, so two
containers (or a redelivered end event) can never start and supersede the same checkpoint.
"""

from __future__ import annotations

from typing import Any

from rlinf_bench.intake.backlog import Entry, State

CKPT = "backlog#ckpt#"
EXP = "backlog#exp#"
_NAMES = {"#s": "state", "#r": "reason"}


def _failed(exc: Exception) -> bool:
    code = str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))
    return code in ("ConditionalCheckFailedException", "TransactionCanceledException")


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

    def _held_update(self, entry_uri: str, experiment: str, verb: str) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": self.table,
                "Key": {"id": {"S": EXP + experiment}},
                "UpdateExpression": f"{verb} held :u",
                "ExpressionAttributeValues": {":u": {"SS": [entry_uri]}},
            }
        }

    def create(self, entry: Entry) -> bool:
        put = {
            "Put": {
                "TableName": self.table,
                "Item": self._item(entry),
                "ConditionExpression": "attribute_not_exists(id)",
            }
        }
        items = [put] + ([self._held_update(entry.uri, entry.experiment, "ADD")] if entry.state is State.HELD else [])
        return self._transact(items)

    def get(self, uri: str) -> Entry | None:
        item = self.db.get_item(TableName=self.table, Key={"id": {"S": CKPT + uri}}, ConsistentRead=True).get("Item")
        return self._entry(item) if item else None

    def transition(self, uri: str, old: State, new: State, reason: str) -> bool:
        entry = self.get(uri)
        if entry is None:
            return False
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
                    ":reason": {"S": reason},
                },
            }
        }
        items = [update] + ([self._held_update(uri, entry.experiment, "DELETE")] if old is State.HELD else [])
        return self._transact(items)

    def claim_slot(self, experiment: str, limit: int) -> bool:
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "Key": {"id": {"S": EXP + experiment}},
            "UpdateExpression": "ADD taken :one",
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        }
        if limit:
            kwargs["ConditionExpression"] = "attribute_not_exists(taken) OR taken < :limit"
            kwargs["ExpressionAttributeValues"][":limit"] = {"N": str(limit)}
        try:
            self.db.update_item(**kwargs)
        except Exception as exc:
            if _failed(exc):
                return False
            raise
        return True

    def free_slot(self, experiment: str) -> None:
        try:
            self.db.update_item(
                TableName=self.table,
                Key={"id": {"S": EXP + experiment}},
                UpdateExpression="ADD taken :minus",
                ConditionExpression="taken > :zero",
                ExpressionAttributeValues={":minus": {"N": "-1"}, ":zero": {"N": "0"}},
            )
        except Exception as exc:
            if not _failed(exc):
                raise

    def held(self, experiment: str) -> list[Entry]:
        item = self.db.get_item(TableName=self.table, Key={"id": {"S": EXP + experiment}}, ConsistentRead=True)
        uris = item.get("Item", {}).get("held", {}).get("SS", [])
        found = [self.get(uri) for uri in uris]
        return [e for e in found if e is not None and e.state is State.HELD]

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
