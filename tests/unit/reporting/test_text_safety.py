"""Hostile text in every message builder: Slack, email, failure notice, report.md and ``compare`` output.

Experiment names come from S3 keys, task names and errors from files anyone with bucket access can write.
None of them may ping a channel, post a disguised link, inject markup or drive the reader's terminal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from rlinf_bench.contracts import CheckpointRef, CheckpointReport, RunStatus
from rlinf_bench.reporting.markdown import checkpoint_markdown
from rlinf_bench.reporting.messages import failure_notification, summary_notification
from rlinf_bench.reporting.text_safety import (
    markdown,
    markdown_code,
    markdown_link,
    plain,
    slack,
    slack_link,
    slack_plain,
)
from rlinf_bench.stats.aggregate import SourcedRun, aggregate_checkpoint
from tests.unit.stats.runfactory import make_run

HOSTILE = (
    "runs/<!channel>/<@U0123ABC> <!here> <#C42|general> <http://evil.example|click> "
    "\x1b[31mRED\x1b[0m \x1b]8;;http://x.example\x07osc-link\x1b]8;;\x07 [x](http://evil.example) "
    "![i](http://evil.example/i.png) <script>alert(1)</script> &amp; http://bare.example "
    "\u202etxt.exe\r\nStatus: COMPLETE\x07\x9b2J"
)
TERMINAL_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def hostile_report() -> CheckpointReport:
    ckpt = CheckpointRef(uri=f"s3://bucket/{HOSTILE}/checkpoints/global_step_7", experiment=HOSTILE, global_step=7)
    runs = [
        SourcedRun(f"r{i}", make_run({0: [1, 0, 1]}, run_index=i, ckpt=ckpt, policy=HOSTILE, task_names={0: HOSTILE}))
        for i in range(2)
    ]
    failed = make_run({0: [1, 0, 1]}, run_index=2, ckpt=ckpt, policy=HOSTILE, task_names={0: HOSTILE})
    failed = failed.model_copy(update={"status": RunStatus.FAILED, "error": HOSTILE}).with_tasks([])
    report = aggregate_checkpoint([*runs, SourcedRun("r2", failed)])
    report.links = {"results": f"s3://bucket/results/{HOSTILE}", "report_site": f"https://site.example/{HOSTILE}"}
    return report


def texts(node: Any) -> Iterator[str]:
    """Every string a Slack payload shows."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from texts(value)
    elif isinstance(node, list):
        for value in node:
            yield from texts(value)


def mrkdwn_objects(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if node.get("type") == "mrkdwn":
            yield node
        for value in node.values():
            yield from mrkdwn_objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from mrkdwn_objects(value)


def assert_slack_safe(payload: dict[str, Any], link_prefixes: tuple[str, ...] = ()) -> None:
    """Once the links we built are taken out, no '<' or '>' is left: nothing can open a mention or link."""
    links = 0
    for text in texts(payload):
        rest = text
        for link in re.findall(r"<[^<>|]*\|[^<>]*>", text):
            if link[1:].startswith(link_prefixes):
                rest, links = rest.replace(link, ""), links + 1
        assert "<" not in rest and ">" not in rest, rest
        assert not TERMINAL_CONTROLS.search(text), repr(text)
    assert links >= len(link_prefixes)
    objects = list(mrkdwn_objects(payload))
    assert objects and all(o.get("verbatim") is True for o in objects)  # no auto-linked URLs or @here


def assert_plain_safe(text: str) -> None:
    assert not TERMINAL_CONTROLS.search(text.replace("\n", "").replace("\t", "")), repr(text)
    assert "\nStatus: COMPLETE" not in text  # a newline in a field cannot forge a line of its own


def rendered_html(md: str) -> str:
    return MarkdownIt("commonmark").render(md)


def test_plain_removes_escape_sequences_and_shows_other_controls() -> None:
    out = plain("\x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07 bell\x07 \u202eabc\nnext")
    assert out == "red link bell\\x07 \\u202eabc ⏎ next"
    assert plain("a\r\nb\tc", multiline=True) == "a\nb\tc"
    assert plain("8-bit \x9b2J csi, \x9d0;t\x07 osc") == "8-bit \\x9b2J csi, \\x9d0;t\\x07 osc"  # defused, nothing lost


def test_slack_escapes_the_three_control_characters_and_links_only_percent_encoded_uris() -> None:
    assert slack("<!channel> & <http://x|y>") == "&lt;!channel&gt; &amp; &lt;http://x|y&gt;"
    link = slack_link("https://site.example/a|b>c d", "<!here>")
    assert link == "<https://site.example/a%7Cb%3Ec%20d|&lt;!here&gt;>"
    assert "<" not in slack_link("javascript:alert(1)", "site")  # a scheme we never build is not linked


def test_markdown_text_renders_as_the_same_text_and_code_cannot_break_out() -> None:
    html = rendered_html(f"- {markdown(HOSTILE)}\n- {markdown_code('a`b` <x>')}\n")
    assert "<a " not in html and "<script" not in html and "<img" not in html
    assert "[x](http" in html  # shown as text
    assert "<code>a`b` &lt;x&gt;</code>" in html
    assert "<a " not in rendered_html(markdown_link("javascript:alert(1)", "site"))


def test_the_summary_in_slack_and_email_carries_no_mention_link_markup_or_escape() -> None:
    report = hostile_report()
    note = summary_notification(report, failed_runs=[HOSTILE], notes=[HOSTILE], mlflow_error=HOSTILE)
    # One link per message: the report (the site here), never the raw results prefix.
    assert_slack_safe(note.slack, link_prefixes=("https://site.example/",))
    assert_plain_safe(note.text)
    assert_plain_safe(note.subject)
    assert "RED" in note.text and "&lt;!channel&gt;" in json.dumps(note.slack)  # shown, not dropped


def test_the_failure_notice_carries_no_mention_link_markup_or_escape() -> None:
    note = failure_notification(HOSTILE, HOSTILE, details=[HOSTILE], links=[HOSTILE], rest_in=HOSTILE)
    assert_slack_safe(note.slack)
    assert_plain_safe(note.text)
    assert_plain_safe(note.subject) and "\n" not in note.subject


def test_report_md_forms_no_link_image_or_html_from_user_text() -> None:
    md = checkpoint_markdown(hostile_report())
    html = rendered_html(md)
    assert "<script" not in html and "<img" not in html
    hrefs = re.findall(r'<a href="([^"]*)"', html)
    assert hrefs and all(h.startswith("https://site.example/") for h in hrefs)  # only the report site
    assert not TERMINAL_CONTROLS.search(md.replace("\n", ""))
    assert "http\\://bare.example" in md  # a bare URL is not auto-linked by GFM either


def test_compare_prints_no_terminal_escape_from_a_task_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rlinf_cli.main import main

    paths = []
    for i in range(3):
        paths.append(tmp_path / f"run{i}.json")
        make_run({0: [1, 0, 1]}, run_index=i, task_names={0: HOSTILE}).save(paths[-1])
    assert main(["compare", *map(str, paths)]) == 0
    out = capsys.readouterr().out
    assert "RED" in out and not TERMINAL_CONTROLS.search(out.replace("\n", ""))


#: Format characters (Unicode category Cf) and separators that reorder, hide or break text on a terminal.
FORMAT_CHARACTERS = [
    "\u202e",  # RIGHT-TO-LEFT OVERRIDE
    "\u2066",  # LEFT-TO-RIGHT ISOLATE
    "\u2067",
    "\u2068",
    "\u2069",  # POP DIRECTIONAL ISOLATE
    "\u200b",  # ZERO WIDTH SPACE
    "\u200c",  # ZERO WIDTH NON-JOINER
    "\u200d",  # ZERO WIDTH JOINER
    "\u2060",  # WORD JOINER
    "\u2061",  # FUNCTION APPLICATION (invisible operator)
    "\ufeff",  # ZERO WIDTH NO-BREAK SPACE (BOM)
    "\u00ad",  # SOFT HYPHEN
    "\u061c",  # ARABIC LETTER MARK
    "\u180e",  # MONGOLIAN VOWEL SEPARATOR
    "\U000e0001",  # LANGUAGE TAG
    "\U000e0041",  # TAG LATIN CAPITAL LETTER A
    "\u2028",  # LINE SEPARATOR
    "\u2029",  # PARAGRAPH SEPARATOR
]


@pytest.mark.parametrize("ch", FORMAT_CHARACTERS, ids=[f"U+{ord(c):04X}" for c in FORMAT_CHARACTERS])
def test_every_format_character_is_shown_by_its_code_in_every_text_sink(ch: str) -> None:
    text = f"task{ch}name"
    code = f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}"
    for sink in (plain, slack, markdown, slack_plain):
        out = sink(text)
        assert ch not in out and code in out, (sink.__name__, out)
