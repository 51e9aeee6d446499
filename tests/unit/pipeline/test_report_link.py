"""The summary's one link: a presigned HTTPS URL of report.html on AWS, the local page in the embedded default."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlparse

import boto3
from moto import mock_aws

from rlinf_aws.report_link import PRESIGN_EXPIRES_S, report_url
from rlinf_aws.s3_objects import S3Objects
from rlinf_aws.state_aggregate import aggregate
from rlinf_aws.state_publish import publish
from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.contracts.workflow import AggregateInput
from rlinf_bench.document_store import Storage
from tests.unit.pipeline.test_aggregate import ok, request
from tests.unit.pipeline.test_publish_reread import RecordingSns


def test_a_site_in_s3_gets_a_presigned_https_url_of_its_single_page() -> None:
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        report = CheckpointReport(success_rate=None, complete=True, suites=[])
        report.links["report_site"] = "s3://results/exp-s1/report/site/index.html"
        url = report_url(report, Storage(S3Objects(s3)))
    parsed = urlparse(url)
    assert parsed.scheme == "https" and parsed.path.endswith("/exp-s1/report/site/report.html")
    assert "X-Amz-Signature=" in parsed.query and f"X-Amz-Expires={PRESIGN_EXPIRES_S}" in parsed.query


def test_the_embedded_default_links_the_local_page_and_nothing_without_a_site() -> None:
    report = CheckpointReport(success_rate=None, complete=True, suites=[])
    assert report_url(report, Storage()) == ""
    assert report_url(report, Storage(), local_html="/out/report/report.html") == "/out/report/report.html"


def test_publish_puts_the_link_in_the_message_and_not_in_the_stored_report(tmp_path: Path) -> None:
    runs = [ok(tmp_path, i) for i in range(3)]
    out = aggregate(
        AggregateInput(request=request(tmp_path), eval_items=[], result_root=str(tmp_path / "root"), outcomes=[runs]),
        storage=Storage(),
    )
    sns = RecordingSns()
    publish(
        out, storage=Storage(), sns=sns, topic_arn="arn:aws:sns:us-east-1:123:results", report_html="/o/report.html"
    )
    email = json.loads(sns.published[0]["Message"])["email"]
    assert "Report: /o/report.html" in email.splitlines()
    assert "report_url" not in CheckpointReport.read(out.report_uri, storage=Storage()).links
