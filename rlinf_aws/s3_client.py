"""The S3 client the core's ``Storage`` builds when none is passed in (entry point ``rlinf_bench.s3_client``)."""

from __future__ import annotations

from typing import Any

__all__ = ["default_s3_client"]


def default_s3_client() -> Any:
    """boto3's S3 client from the default credentials chain; imported only by callers that touch S3."""
    import boto3

    return boto3.client("s3")
