"""The core's object store on S3 (:class:`rlinf_bench.ports.ObjectStore`): the one place S3 is listed and read.

Everything that lists a prefix, reads, writes or downloads an object (the document store, checkpoint
listings, the Jobs' checkpoint downloads, the embedded default's result copies) goes through
:class:`S3Objects`, so pagination and the meaning of S3's error codes are written once. The client is
passed in, or built on first use from boto3's default credentials chain (a Job or a command that never
touches S3 needs no AWS set-up).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rlinf_aws.lazy_client import LazyClient
from rlinf_bench.errors import StorageLocationError, StoredObjectMissingError
from rlinf_bench.ports import ObjectInfo

__all__ = ["S3Objects", "error_code"]

#: S3's answers for an object that is not there (a missing bucket included: nothing can be read from it).
MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound", "NoSuchBucket"})
#: Answers to a listing that no retry can change: the bucket is not there or its name cannot be one.
#: Throttling (SlowDown), timeouts and 5xx propagate as raised, so a caller may retry them.
UNUSABLE_BUCKET_CODES = frozenset({"NoSuchBucket", "InvalidBucketName"})


def error_code(exc: BaseException) -> str:
    """The error code of a botocore ClientError ('' for other exceptions)."""
    response = getattr(exc, "response", None)
    error = response.get("Error") if isinstance(response, dict) else None
    return str(error.get("Code", "")) if isinstance(error, dict) else ""


class S3Objects:
    """S3 behind the core's ObjectStore interface (and the Jobs' ObjectDownloader)."""

    def __init__(self, client: Any = None, *, factory: Callable[[], Any] | None = None) -> None:
        self._client = LazyClient("s3", client, factory)

    @property
    def client(self) -> Any:
        """The boto3 S3 client, built on first use when none was given."""
        return self._client.get()

    def list_prefix(self, bucket: str, prefix: str) -> Iterator[ObjectInfo]:
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
                for obj in page.get("Contents", []):
                    etag = str(obj.get("ETag", "")).strip('"')
                    yield ObjectInfo(obj["Key"], int(obj["Size"]), obj["LastModified"], etag)
        except Exception as exc:
            code = error_code(exc)
            # botocore refuses some names itself, before any request (ParamValidationError).
            if code in UNUSABLE_BUCKET_CODES or type(exc).__name__ == "ParamValidationError":
                raise StorageLocationError(
                    f"{code or type(exc).__name__}: s3://{bucket}/{prefix} cannot be listed ({str(exc)[:300]})"
                ) from exc
            raise

    def read_object(self, bucket: str, key: str, *, max_bytes: int | None = None) -> bytes:
        ranged = {} if max_bytes is None else {"Range": f"bytes=0-{max_bytes}"}
        try:
            body = self.client.get_object(Bucket=bucket, Key=key, **ranged)["Body"]
            return bytes(body.read() if max_bytes is None else body.read(max_bytes + 1))
        except Exception as exc:
            code = error_code(exc)
            if code == "InvalidRange":  # S3's answer to a range of an empty object
                return b""
            if code in MISSING_CODES:
                raise StoredObjectMissingError(f"s3://{bucket}/{key} does not exist ({code})") from exc
            raise

    def write_object(self, bucket: str, key: str, data: bytes, *, content_type: str) -> None:
        self.client.put_object(Bucket=bucket, Key=key, Body=data, ContentType=content_type)

    def object_exists(self, bucket: str, key: str) -> bool:
        try:
            self.client.head_object(Bucket=bucket, Key=key)
        except Exception as exc:
            if error_code(exc) in MISSING_CODES:
                return False
            raise
        return True

    def download_object(self, bucket: str, key: str, target: Path) -> None:
        # boto3's managed transfer: multipart and parallel for the multi-GB weights of a checkpoint.
        self.client.download_file(bucket, key, str(target))

    def upload_object(self, source: Path, bucket: str, key: str) -> None:
        """Copy a local file (a video) to the object, through boto3's managed transfer."""
        self.client.upload_file(str(source), bucket, key)

    def remove_object(self, bucket: str, key: str) -> None:
        """Delete the object (deleting one that is not there succeeds, as S3 does)."""
        self.client.delete_object(Bucket=bucket, Key=key)
