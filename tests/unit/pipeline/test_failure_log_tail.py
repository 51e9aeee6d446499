"""Failure notices end with the Job's last log lines, or name the file that holds them: never a bare
"last log lines:"."""

from __future__ import annotations

from pathlib import Path

from rlinf_bench.reporting.messages import failure_notification
from rlinf_local.local_executor import log_excerpt


def test_a_job_log_gives_its_path_and_last_lines(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("".join(f"line {i}\n" for i in range(40)) + "Traceback: CUDA out of memory\n")
    text = log_excerpt(log)
    assert text.startswith(f"last log lines (whole log: {log}):\n")
    assert text.endswith("line 39\nTraceback: CUDA out of memory") and "line 5\n" not in text


def test_an_empty_or_missing_log_names_the_file_instead_of_dangling(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("")
    assert log_excerpt(empty) == f"the Job wrote no log lines (log file: {empty})"
    assert "last log lines" not in log_excerpt(tmp_path / "missing.log")


def test_the_failure_email_ends_with_the_log_lines_each_escaped() -> None:
    reason = "exit code 1 after 3 attempt(s); last log lines (whole log: /o/jobs/x.log):\nstep 1\nOOM \x1b[31mkilled"
    note = failure_notification("exp global_step 7", reason, details=["execution: e1"])
    lines = note.text.rstrip("\n").splitlines()
    assert lines[-3:] == ["Last log lines:", "  | step 1", "  | OOM killed"]  # the escape sequence dropped
    assert "\x1b" not in note.text
    assert (
        "Why: exit code 1 after 3 attempt(s); last log lines (whole log: /o/jobs/x.log): at the end of this message"
        in note.text
    )
    assert "step 1" in str(note.slack["blocks"][-1])


def test_a_reason_that_announces_log_lines_and_has_none_says_where_the_cause_is() -> None:
    note = failure_notification(
        "exp global_step 7", "exit code 1; last log lines:\n", rest_in="the execution history of e1"
    )
    assert not note.text.rstrip().endswith("last log lines:")
    assert "last log lines: none captured; the whole cause is in the execution history of e1" in note.text


def test_the_summary_states_a_failed_run_on_one_line_with_its_last_log_line() -> None:
    from rlinf_bench.reporting.messages import summary_notification
    from tests.unit.pipeline.test_messages_and_slack import report

    failed = (
        "libero_goal run 1: exit code 1; last log lines (whole log: /o/jobs/r1.log):\nstep 3\nRuntimeError: CUDA OOM\n"
    )
    note = summary_notification(report(), failed_runs=[failed])
    first = note.text.splitlines()[0]
    assert first == (
        "Failed: libero_goal run 1: exit code 1; last log lines (whole log: /o/jobs/r1.log): … RuntimeError: CUDA OOM"
    )
