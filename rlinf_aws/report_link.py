"""The one link of a summary message: something a person can open.

On AWS the report lives in S3, and an ``s3://`` URI opens nothing in a mail client or in Slack: the link
is a presigned HTTPS URL of the site's entry page ``report.html`` (the whole report on one self-contained
page: inline CSS, the plot as a data URI, so no other object needs a signature; its drill-down links to the
checkpoint pages open where the site folder is served or copied, e.g. ``aws s3 sync``). In the embedded
default it is the local ``report.html`` the run leaves in its output folder (``REPORT_HTML``).
"""

from __future__ import annotations

import logging
from typing import Any

from rlinf_aws.s3_objects import S3Objects
from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.contracts.layout import ENTRY_PAGE
from rlinf_bench.document_store import Storage, is_s3, parse_s3

__all__ = ["PRESIGN_EXPIRES_S", "report_url"]

log = logging.getLogger(__name__)

#: SigV4's longest validity (7 days). A URL signed with a Lambda role's session credentials stops working
#: when that session ends (hours): the message says where the report is stored either way.
PRESIGN_EXPIRES_S = 7 * 24 * 3600
_PAGE = ENTRY_PAGE


def _page_of(site: str) -> str:
    """The site's entry page (``.../site/report.html``; a report stored before it was the entry page names
    ``.../site/index.html``, whose neighbour it is)."""
    base = site.rsplit("/", 1)[0] if site.endswith(".html") else site.rstrip("/")
    return f"{base}/{_PAGE}"


def _sigv4(s3: Any) -> Any:
    """A client like ``s3`` (region, endpoint, credentials) that signs with SigV4: SigV2 URLs are refused by
    newer regions, and SigV4 honours ``ExpiresIn`` up to 7 days."""
    import boto3
    from botocore.config import Config

    # Always a new client: a client built without an explicit signature_version reports s3v4 in its
    # config yet presigns with SigV2 in us-east-1.
    meta = s3.meta
    # The injected client's own credentials (botocore keeps them on its signer), not the environment's.
    signer_creds = s3._request_signer._credentials
    creds = signer_creds.get_frozen_credentials() if signer_creds is not None else None
    return boto3.client(
        "s3",
        region_name=meta.region_name,
        endpoint_url=meta.endpoint_url,
        aws_access_key_id=creds.access_key if creds else None,
        aws_secret_access_key=creds.secret_key if creds else None,
        aws_session_token=creds.token if creds else None,
        config=Config(signature_version="s3v4"),
    )


def report_url(report: CheckpointReport, storage: Storage, *, local_html: str = "") -> str:
    """A presigned HTTPS URL of the stored report page, ``local_html`` when given, the page's local path for
    a local results prefix; '' when the report has no site (the message then names the stored report)."""
    if local_html:
        return local_html
    site = report.links.get("report_site", "")
    if not site:
        return ""
    page = _page_of(site)
    if not is_s3(page):
        return page
    loc = parse_s3(page, need_key=True)
    objects = storage.objects
    if not isinstance(objects, S3Objects):
        log.warning("could not presign %s: this publisher has no S3 access", page)
        return ""
    try:
        url = _sigv4(objects.client).generate_presigned_url(
            "get_object", Params={"Bucket": loc.bucket, "Key": loc.key}, ExpiresIn=PRESIGN_EXPIRES_S
        )
    except Exception as exc:  # a signing failure must not stop the message: it falls back to the stored URI
        log.warning("could not presign %s: %s", page, exc)
        return ""
    return str(url)
