"""``evaluate``'s progress bar and its log lines: a log line never lands inside the bar's line."""

from __future__ import annotations

import contextlib
import io
import logging
import re
from collections.abc import Iterator

import pytest

from eval_runner.progress import Progress


@contextlib.contextmanager
def console(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[io.StringIO, logging.Logger]]:
    """stderr as a string, with the root logger writing to it as logging.basicConfig sets it up.

    Entered in the test body: pytest's own capture puts its stream back on sys.stderr between set-up and call.
    """
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    root = logging.getLogger()
    handler = logging.StreamHandler(err)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield err, root
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


def test_given_a_log_line_while_the_bar_is_shown_then_it_starts_a_line_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with console(monkeypatch) as (err, _):
        progress = Progress(4, desc="libero_spatial")
        progress.episode_done(True)
        logging.getLogger("eval_runner.loop").info("task 1 retried after a worker crash")
        progress.episode_done(False)
        progress.close()
    text = err.getvalue()
    # The bar is drawn with carriage returns; the log line must follow a cleared line, not the bar's text.
    assert re.search(r"[\r\n]INFO eval_runner.loop: task 1 retried after a worker crash\n", text), repr(text)
    assert "ep/s" in text  # the bar was drawn


def test_after_the_bar_closes_then_log_lines_go_to_the_users_handler_again(monkeypatch: pytest.MonkeyPatch) -> None:
    with console(monkeypatch) as (err, root):
        handlers = list(root.handlers)
        progress = Progress(2, desc="libero_spatial")
        assert root.handlers != handlers  # routed through the bar while it is open
        progress.close()
        assert root.handlers == handlers
        logging.getLogger("x").info("after")
    assert err.getvalue().endswith("INFO x: after\n")
