"""Reading stored contracts: a JSON document at a local path or an ``s3://`` URI, validated, errors naming both."""

from __future__ import annotations

from typing import TypeVar

from rlinf_bench.contracts.versioned import Contract
from rlinf_bench.document_store import Storage
from rlinf_bench.errors import ContractError, StoredObjectMissingError
from rlinf_bench.ports import DocumentStore

__all__ = ["read_contract"]

C = TypeVar("C", bound=Contract)


def read_contract(model: type[C], uri: str, *, storage: DocumentStore | None = None) -> C:
    """``model`` read from ``uri`` (``storage``: local paths only when not given); a missing or invalid document
    raises ContractError naming the URI."""
    try:
        return model.read(uri, storage=storage or Storage())
    except StoredObjectMissingError as exc:
        raise ContractError(f"{model.__name__} {uri} does not exist; check the path or URI") from exc
