"""Write the RunResult as it grows: after every episode, atomically, to a local file or to S3.

Local files are replaced by rename, so a reader (or a crash) never sees half a document. S3 PUTs are
atomic too but cost a request each, so uploads are throttled (the final write always goes out).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from rlinf_aws.s3_objects import S3Objects
from rlinf_bench.contracts import RunResult
from rlinf_bench.document_store import S3Location, Storage, is_s3, join, parse_s3
from rlinf_bench.errors import ConfigError, StorageError, StoredObjectMissingError

log = logging.getLogger(__name__)


class ResultWriter:
    """Writes results to ``out`` (a local path or ``s3://bucket/key``)."""

    def __init__(self, out: str, *, s3_client: Any = None, min_interval_s: float = 15.0) -> None:
        self.out = out
        self.is_s3 = is_s3(out)
        self.objects = S3Objects(s3_client)
        self.storage = Storage(self.objects)
        self._min_interval_s = min_interval_s if self.is_s3 else 0.0
        self._last_write: float | None = None  # monotonic time of the last write
        if self.is_s3:
            loc = parse_s3(out, what="output URI", need_key=True)
            self.bucket, self.key = loc.bucket, loc.key
        else:
            self.path = Path(out)
            if self.path.is_dir():
                raise ConfigError(f"--out {out} is a directory; give a file name such as {self.path / 'result.json'}")

    def write(self, result: RunResult, *, final: bool = False) -> bool:
        """Write ``result``; returns whether it wrote.

        A non-final S3 write is skipped when it comes too soon after the last one, and a failed one is
        logged and retried with the next snapshot. A final write, and every local write, raises on failure.
        """
        now = time.monotonic()
        if not final and self._last_write is not None and now - self._last_write < self._min_interval_s:
            return False
        if self.is_s3:
            try:
                self.storage.write_json(self.out, result.to_json())
            except StorageError as exc:  # botocore ClientError / EndpointConnectionError (boto3 already retried)
                if final:
                    raise
                # A progress snapshot that did not make it is replaced by the next one; the run goes on.
                log.warning(
                    "could not upload the progress snapshot to %s (%s); will retry after the next episode",
                    self.out,
                    exc,
                )
                return False
        else:
            self.storage.write_json(self.out, result.to_json())
        self._last_write = now
        return True

    def read_existing(self) -> RunResult | None:
        """The result already at the output path (None when there is none), for resuming."""
        try:
            body = self.storage.read_bytes(self.out)
        except StoredObjectMissingError:
            return None
        return RunResult.from_json(body, source=self.out)

    def sibling(self, name: str) -> str:
        """Where a file that belongs with the result goes (videos): next to it, locally or in S3."""
        if self.is_s3:
            folder = self.key.rsplit("/", 1)[0] if "/" in self.key else ""
            return join(S3Location(self.bucket, folder).uri, name)
        return str(self.path.parent / name)

    def upload(self, local: Path, uri: str) -> str:
        """Copy a local file to ``uri`` (S3 only; local siblings are written in place)."""
        loc = parse_s3(uri, what="upload target", need_key=True)
        self.objects.upload_object(local, loc.bucket, loc.key)
        return uri

    def remove(self, uri: str) -> None:
        """Delete a file written with the result (a video displaced by a later one); a missing one is fine."""
        if is_s3(uri):
            loc = parse_s3(uri, what="file to delete", need_key=True)
            self.objects.remove_object(loc.bucket, loc.key)
        else:
            Path(uri).unlink(missing_ok=True)
