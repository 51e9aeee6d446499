"""The Slack outbox: a webhook on loopback that keeps each posted Block Kit payload as a file."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from rlinf_local.outbox import SlackOutbox


def post(url: str, doc: object) -> int:
    req = urllib.request.Request(url, data=json.dumps(doc).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return int(resp.status)


def test_each_post_becomes_one_numbered_json_file(tmp_path: Path) -> None:
    outbox = SlackOutbox(tmp_path / "slack")
    try:
        first = {"text": "demo global_step 100: SR 0.0%", "blocks": [{"type": "header"}]}
        assert post(outbox.url, first) == 200
        assert post(outbox.url, {"text": "FAILED: x", "blocks": []}) == 200
    finally:
        outbox.close()
    assert [p.name for p in outbox.written] == ["001-demo-global-step-100-sr-0-0.json", "002-failed-x.json"]
    assert json.loads(outbox.written[0].read_text()) == first
