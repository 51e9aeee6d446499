"""replay-events never stops on a line: each one it cannot deliver or the router cannot read is dead, with its number."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import rlinf_local.replay_events as replay
from rlinf_cli.main import main
from rlinf_local.replay_events import replay_events

ROOT = "runs/exp/checkpoints/global_step_5"


def event(key: str = "logs/train.log", bucket: str = "rlinf-checkpoints") -> str:
    return json.dumps(
        {
            "version": "0",
            "source": "aws.s3",
            "detail-type": "Object Created",
            "time": "2026-11-30T05:00:00Z",
            "detail": {"bucket": {"name": bucket}, "object": {"key": key, "size": 3}},
        },
        ensure_ascii=False,
    )


#: Lines that used to stop the replay with a traceback (RecursionError, ValueError, ConfigError), and what
#: each dead letter must say instead.
HOSTILE = {
    "arrays 5000 deep": ("[" * 5000 + "]" * 5000, "nests deeper than 32 levels"),
    "an integer of 5000 digits": ('{"a": ' + "7" * 5000 + "}", "integer of 5000 digits"),
    "a reserved bucket name": (event(bucket="xn--abc"), "is not a valid S3 bucket name"),
    "not JSON": ("{not json", "not valid JSON"),
    "a lone surrogate": ('{"a": "\ud800"}', "not UTF-8 text (a lone surrogate U+D800 at offset 7 of line 10)"),
}


def test_given_hostile_lines_among_good_ones_then_each_is_dead_with_its_line_and_the_others_are_routed() -> None:
    lines = [event()]
    for body, _ in HOSTILE.values():
        lines += [body, event()]

    report = replay_events(lines)

    assert report.events == report.records == len(lines)
    assert report.counts["dead"] == len(HOSTILE) and report.counts["ignored"] == len(HOSTILE) + 1
    assert [d["line"] for d in report.dead_letters] == [2, 4, 6, 8, 10]
    for dead, (name, (_, reason)) in zip(report.dead_letters, HOSTILE.items(), strict=True):
        assert reason in dead["reason"], name
    json.dumps(report.to_dict())  # the report itself holds nothing that cannot be printed


def test_given_a_bucket_moto_cannot_create_then_that_line_is_dead_with_the_reason_and_the_next_is_routed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = replay.create_bucket

    def create_bucket(s3: Any, name: str, region: str, *, eventbridge: bool) -> None:
        if name == "refused-bucket":
            raise RuntimeError("bucket name refused by the local S3")
        real(s3, name, region, eventbridge=eventbridge)

    monkeypatch.setattr(replay, "create_bucket", create_bucket)

    report = replay_events([event(bucket="refused-bucket"), event()])

    [dead] = report.dead_letters
    assert dead["line"] == 1 and "'refused-bucket': the bucket cannot be created locally" in dead["reason"]
    assert "bucket name refused by the local S3" in dead["reason"]
    assert report.counts == {"started": 0, "duplicate": 0, "pending": 0, "dead": 1, "ignored": 1}


def test_given_a_line_of_bytes_that_are_not_utf8_then_only_that_line_is_dead() -> None:
    report = replay_events([event().encode(), b"\xff\xfe{}", b"", event().encode()])

    [dead] = report.dead_letters
    assert dead["line"] == 2 and "not UTF-8 text (byte 0xff at offset 0 of line 2)" in dead["reason"]
    assert dead["event"] == "\\xff\\xfe{}"
    assert report.events == 3 and report.counts["dead"] == 1 and report.counts["ignored"] == 2


def test_given_a_file_with_a_bad_byte_when_replayed_from_the_cli_then_it_lists_the_dead_line_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "events.jsonl"
    # U+2028 is a line break to str.splitlines but is legal inside a JSON string: it must not split the event.
    path.write_bytes(b"\n".join([event("logs/a\u2028b.log").encode(), b"\x80 not text", event().encode()]) + b"\n")

    assert main(["replay-events", str(path)]) == 1

    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("3 events: 0 started, 0 duplicate, 0 pending, 2 dead, 1 ignored (= 3)")
    # The whole first line reached the router as one event (its key is refused, shown without a raw U+2028).
    assert out[-2] == "  dead      line 1: object key 'logs/a\\u2028b.log' contains odd characters ('\\u2028')"
    assert out[-1].startswith("  dead      line 2: not UTF-8 text (byte 0x80 at offset 0 of line 2)")


def test_given_only_readable_events_then_the_cli_exits_0_and_json_names_no_dead_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(event() + "\n\n" + event("logs/other.log") + "\n")

    assert main(["replay-events", str(path), "--json"]) == 0

    summary = json.loads(capsys.readouterr().out)
    assert summary["dead_letters"] == [] and summary["summary"]["ignored"] == 2


def test_given_a_dead_line_then_json_output_exits_1_and_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(event() + "\n" + '{"Records": [' * 2000 + "\n")

    assert main(["replay-events", str(path), "--json"]) == 1

    [dead] = json.loads(capsys.readouterr().out)["dead_letters"]
    assert dead["line"] == 2 and "nests deeper than 32 levels" in dead["reason"]


def test_a_line_over_the_bound_is_dead_with_its_number_and_length_and_the_next_is_routed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "events.jsonl"
    huge = b'{"a": "' + b"x" * (2 * 1024 * 1024) + b'"}'  # 2 MiB: over SQS's limit too
    path.write_bytes(b"\n".join([event().encode(), huge, event().encode()]))  # no final newline

    assert main(["replay-events", str(path)]) == 1

    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    out = captured.out.splitlines()
    assert out[0].startswith("3 events: 0 started, 0 duplicate, 0 pending, 1 dead, 2 ignored (= 3)")
    assert out[-1] == (
        f"  dead      line 2: the line is {len(huge)} bytes long, over the {replay.MAX_LINE_BYTES}-byte bound "
        "of an intake message (no S3 event is that long); not replayed"
    )


def test_lines_are_read_in_bounded_pieces_and_numbered_as_split_would() -> None:
    import io

    data = b"a\n\n" + b"b" * 300 + b"\nc\r\n" + b"d" * 70_000 + b"\ne"
    lines = list(replay.read_lines(io.BytesIO(data), max_bytes=100))
    assert lines[:3] == [b"a", b"", replay.OverlongLine(300)]
    assert lines[3:] == [b"c\r", replay.OverlongLine(70_000), b"e"]
    assert list(replay.read_lines(io.BytesIO(b"x\n"))) == [b"x"]


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "-5", "1e400", "soon"])
def test_a_quiet_period_that_is_not_a_finite_number_of_seconds_is_refused_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(event() + "\n")

    with pytest.raises(SystemExit) as exit_info:
        main(["replay-events", str(path), f"--quiet-period={value}"])

    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --quiet-period: {value!r} is not a" in err and "Traceback" not in err
