"""Every message fits its channel: SNS's 256 KiB and subject, Slack's blocks and text lengths; what is cut
says where the rest is."""

from __future__ import annotations

import json
from typing import Any

from rlinf_bench.contracts import CheckpointReport
from rlinf_bench.reporting.message_limits import (
    SLACK_HEADER_MAX_CHARS,
    SLACK_MAX_BLOCKS,
    SLACK_SECTION_MAX_CHARS,
    SNS_MESSAGE_MAX_BYTES,
    SNS_SUBJECT_MAX_CHARS,
    cut,
    cut_bytes,
    utf8_len,
)
from rlinf_bench.reporting.messages import failure_notification, sns_message, sns_size, summary_notification
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from tests.unit.stats.runfactory import make_run

REPORT_JSON = "s3://bucket/results/exp/report/checkpoint_report.json"


def report(suites: int = 1) -> CheckpointReport:
    names = [f"libero_spatial_{i}" if i else "libero_spatial" for i in range(suites)]
    runs = [
        SourcedRun(f"{name}-r{i}", make_run({0: [1, 0, 1]}, run_index=i, suite="libero_spatial"))
        for name in names[:1]
        for i in range(3)
    ]
    out = aggregate_checkpoint(runs)
    out.suites = [s.model_copy(update={"suite": name}) for name in names for s in out.suites[:1]]
    out.links = {"report_json": REPORT_JSON}
    return out


def assert_slack_within_limits(slack: dict[str, Any]) -> None:
    blocks = slack["blocks"]
    assert len(blocks) <= SLACK_MAX_BLOCKS
    for b in blocks:
        text = b.get("text", {}).get("text", "")
        limit = SLACK_HEADER_MAX_CHARS if b["type"] == "header" else SLACK_SECTION_MAX_CHARS
        assert len(text) <= limit
    assert len(slack["text"]) <= SLACK_SECTION_MAX_CHARS


def test_cut_keeps_the_bound_and_names_where_the_rest_is() -> None:
    out = cut("x" * 10_000, 500, rest_in="s3://b/run.json")
    assert len(out) <= 500 and out.endswith("the full text is in s3://b/run.json]") and "9" in out
    assert cut("short", 500, rest_in="x") == "short"
    wide = cut_bytes("é" * 10_000, 1001, rest_in="f")
    assert utf8_len(wide) <= 1001 and "cut:" in wide


def test_long_run_errors_and_failure_lines_give_an_sns_message_under_256_kib_with_a_pointer() -> None:
    failed = [f"libero_spatial run {i}: JobFailed: " + "é traceback line " * 20_000 for i in range(200)]
    note = summary_notification(report(), failed_runs=failed, notes=["n" * 500_000], mlflow_error="e" * 300_000)
    kwargs = sns_message(note)
    assert sns_size(kwargs) <= SNS_MESSAGE_MAX_BYTES
    doc = json.loads(kwargs["Message"])
    assert len(doc["email"]) < len(note.text)  # the email text itself had to be cut
    assert REPORT_JSON in doc["email"] and "cut:" in doc["email"]
    slack = json.loads(doc["lambda"])["slack"]
    assert_slack_within_limits(slack)
    assert REPORT_JSON in json.dumps(slack)


def test_a_report_with_more_suites_than_slack_blocks_is_cut_with_a_pointer_to_the_report() -> None:
    note = summary_notification(report(suites=80))
    assert_slack_within_limits(note.slack)
    last = json.dumps(note.slack["blocks"][-2:])
    assert "more part(s) of this message left out" in last and REPORT_JSON in last


def test_a_huge_failure_cause_fits_sns_and_slack_and_names_the_execution_history() -> None:
    note = failure_notification(
        "exp global_step 7\nsecond line " + "w" * 500, "boom " * 400_000, rest_in="the execution history of ex-1"
    )
    kwargs = sns_message(note)
    assert sns_size(kwargs) <= SNS_MESSAGE_MAX_BYTES
    assert len(kwargs["Subject"]) <= SNS_SUBJECT_MAX_CHARS and "\n" not in kwargs["Subject"]
    assert "the execution history of ex-1" in note.text
    assert_slack_within_limits(note.slack)


def test_a_long_subject_and_header_are_cut_at_a_word_with_an_ellipsis() -> None:
    from rlinf_bench.reporting.notify import email_subject

    long = report()
    long.experiment = "openvla-oft-grpo libero spatial object goal long sweep with a very long experiment name"
    long.global_step = 12_000
    note = summary_notification(long)
    full = email_subject(long)

    subject = note.subject
    assert len(subject) <= SNS_SUBJECT_MAX_CHARS < len(full)
    assert subject.endswith("…") and "[cut" not in subject
    kept = subject.removesuffix("…")
    assert full.startswith(kept) and full[len(kept)] == " "  # a whole word, never a piece of one
    header_text = note.slack["blocks"][0]["text"]["text"]
    assert header_text == long.experiment + " global_step 12000"  # fits Slack's 150: not cut at all
    failure = failure_notification("x " * 100, "boom")
    assert failure.slack["blocks"][0]["text"]["text"].endswith("x…") and "[cut" not in str(failure.slack["blocks"][0])
