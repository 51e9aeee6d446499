"""Put checkpoint objects into (moto) S3 the way FSx exports them: plain puts, and a multipart upload for the weights."""

from __future__ import annotations

from typing import Any

PART = 5 * 1024 * 1024  # S3's (and moto's) minimum size of every part but the last


def multipart_put(s3: Any, bucket: str, key: str, size: int) -> None:
    """Upload ``size`` bytes as two parts (the first at the minimum part size)."""
    upload = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    first = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=1, Body=b"\1" * PART)
    second = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=2, Body=b"\2" * max(1, size - PART))
    s3.complete_multipart_upload(
        Bucket=bucket,
        Key=key,
        UploadId=upload,
        MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": first["ETag"]}, {"PartNumber": 2, "ETag": second["ETag"]}]
        },
    )


def put_objects(
    s3: Any, bucket: str, root: str, objects: list[tuple[str, int]], *, multipart_weights: bool = True
) -> None:
    for relative, size in objects:
        key = f"{root}/{relative}"
        if multipart_weights and relative.endswith("full_weights.pt"):
            multipart_put(s3, bucket, key, size)
        else:
            s3.put_object(Bucket=bucket, Key=key, Body=b"\0" * size)
