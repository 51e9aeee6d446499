"""What the core needs from the world outside it, as small interfaces; the implementations live at the edge.

The core decides (is a checkpoint complete, what does a report say, which layout is this) and never calls a
cloud or GPU API itself. Whoever runs it passes in the implementations:

================  ===========================================  ==================================================
interface         on AWS and in the Jobs                       embedded default and tests
================  ===========================================  ==================================================
ObjectStore       ``rlinf_aws.s3_objects.S3Objects`` (boto3)   the same class on moto's S3; in-memory fakes
DocumentStore     ``rlinf_bench.document_store.Storage``: local paths itself, ``s3://`` through an ObjectStore
DeadLetterSink    ``rlinf_aws.sqs_dead_letters.SqsDeadLetters``  the same class on moto's SQS; lists in tests
ParameterSource   ``rlinf_aws.ssm_parameters.SsmParameters``   the same class on moto's SSM
GpuDescriber      ``rlinf_doctor.nvml_gpus.NvmlGpus`` (NVML)   fixed lists in tests
================  ===========================================  ==================================================

Errors are part of each interface: an implementation raises :class:`~rlinf_bench.errors.StoredObjectMissingError`
for an object that is not there, :class:`~rlinf_bench.errors.StorageLocationError` for a bucket that does not
exist or cannot be one (no retry changes that answer), and :class:`~rlinf_bench.errors.StorageError` for any
other refusal it understands; anything else (throttling, timeouts) propagates as raised, so callers that retry
can tell transient failures from permanent ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "DeadLetterSink",
    "DocumentStore",
    "GpuDescriber",
    "ObjectDownloader",
    "ObjectInfo",
    "ObjectStore",
    "ParameterSource",
]


@dataclass(frozen=True)
class ObjectInfo:
    """One stored object as a listing shows it."""

    key: str  # the whole key in its bucket
    size: int
    last_modified: datetime
    etag: str = ""  # the store's version tag of the content ('' when the store keeps none)


class ObjectStore(Protocol):
    """Objects in buckets: list a prefix, read, write and look up one object."""

    def list_prefix(self, bucket: str, prefix: str) -> Iterable[ObjectInfo]:
        """Every object whose key starts with ``prefix`` (all pages), directory markers included."""
        ...

    def read_object(self, bucket: str, key: str, *, max_bytes: int | None = None) -> bytes:
        """The object's bytes; with ``max_bytes``, at most ``max_bytes + 1`` of them (so a caller can tell
        an object over its bound without reading it whole; an empty object reads as b'')."""
        ...

    def write_object(self, bucket: str, key: str, data: bytes, *, content_type: str) -> None:
        """Store ``data`` as the object (one atomic put)."""
        ...

    def object_exists(self, bucket: str, key: str) -> bool:
        """Whether the object is there."""
        ...


class ObjectDownloader(ObjectStore, Protocol):
    """An ObjectStore that also copies a (large) object to a local file, as the Jobs do with checkpoints."""

    def download_object(self, bucket: str, key: str, target: Path) -> None:
        """Write the object's content to ``target`` (the caller checks its size and renames it into place)."""
        ...


class DocumentStore(Protocol):
    """Documents named by a local path or an ``s3://bucket/key`` URI (:class:`rlinf_bench.document_store.Storage`)."""

    def read_bytes(self, uri: str, *, max_bytes: int | None = None) -> bytes: ...

    def read_text(self, uri: str) -> str: ...

    def read_json(self, uri: str) -> Any: ...

    def exists(self, uri: str) -> bool: ...

    def list_keys(self, prefix_uri: str, *, suffix: str = "") -> list[str]: ...

    def write_bytes(self, uri: str, data: bytes, *, content_type: str = "application/octet-stream") -> str: ...

    def write_text(self, uri: str, text: str, *, content_type: str = "text/plain; charset=utf-8") -> str: ...

    def write_json(self, uri: str, data: Any) -> str: ...


class DeadLetterSink(Protocol):
    """Where unusable messages go, with the reason (the DLQ in production).

    ``letter_id`` names the record (message id and record index): the same id is one letter, so a sink
    shared by several containers can drop repeats (the router's Lambda wraps its sink in idempotency on it).
    """

    def send(self, body: str, reason: str, *, letter_id: str) -> None: ...


class ParameterSource(Protocol):
    """Named configuration values kept outside the code (SSM Parameter Store on AWS)."""

    def read_parameter(self, name: str) -> str:
        """The value of ``name`` (decrypted); StorageError naming it when it cannot be read."""
        ...


class GpuDescriber(Protocol):
    """The GPUs this process can see, for a result's provenance."""

    def visible_gpus(self) -> list[str]:
        """One line per GPU, e.g. ``"NVIDIA H100 (81559 MiB, driver 550.54)"``; empty without GPUs. Never raises."""
        ...
