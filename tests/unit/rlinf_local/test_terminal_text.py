"""What the CLI prints to a terminal carries no escape sequence from a name, a Job's cause or an error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rlinf_cli.main import main
from rlinf_local.executions import ExecutionSummary, Failure
from rlinf_local.status_command import format_status

HOSTILE = "exp\x1b[2J\x1b]0;pwned\x07\x1b]8;;http://x.example\x07link\x1b]8;;\x07\r\nforged line\u202e"
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]")


def test_status_shows_hostile_names_and_reasons_without_escape_sequences() -> None:
    summary = ExecutionSummary(name=HOSTILE, status="FAILED", failures=[Failure(what=HOSTILE, reason=HOSTILE)])
    out = format_status([summary])
    assert not CONTROLS.search(out.replace("\n", ""))
    assert "\nforged line" not in out and "link" in out


def test_a_cli_error_naming_a_hostile_file_prints_no_escape_sequence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "run\x1b[2J\x07pwned.json"  # a file name is any bytes but / and NUL
    bad.write_text('{"schema_version": "1.0", "bogus": 1}')
    assert main(["compare", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "run\\x07pwned.json" in err and not CONTROLS.search(err.replace("\n", ""))
