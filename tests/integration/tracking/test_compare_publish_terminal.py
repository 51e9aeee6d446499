"""`rlinf-bench compare --publish` logs no raw field text: escape sequences and format characters from a result
file never reach the terminal, and no secret in one does either."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.stats.runfactory import make_run

ROOT = Path(__file__).resolve().parents[3]
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
HOSTILE_VIDEO = "run0.videos/\x1b]0;pwned\x07\x1b[2J\x1b]8;;http://evil.example\x07clip\u202e4pm.txt\r\nforged line"
WEBHOOK = "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/sEcReTpAtHoFtHeHoOk"


@pytest.mark.slow
def test_compare_publish_shows_hostile_field_text_escaped_on_the_terminal(tmp_path: Path) -> None:
    paths = []
    for i in range(3):
        run = make_run({0: [1, 0, 1]}, run_index=i)
        task = run.tasks[0]
        videos = [HOSTILE_VIDEO, f"{tmp_path}/{WEBHOOK}.mp4", None]
        eps = [e.model_copy(update={"video": videos[e.init_state]}) for e in task.episodes]
        path = tmp_path / f"run{i}.json"
        run.with_tasks([task.model_copy(update={"episodes": eps})]).save(path)
        paths.append(str(path))
    cmd = [sys.executable, "-m", "rlinf_cli.main", "compare", *paths, "--publish", "--out", str(tmp_path / "out")]
    proc = subprocess.run(
        [*cmd, "--tracking-uri", f"sqlite:///{tmp_path}/mlflow.db"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # the checkout under test, whatever is installed
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    err = proc.stderr
    assert not CONTROLS.search(err.replace("\n", "").replace("\t", "")), [
        line for line in err.splitlines() if CONTROLS.search(line)
    ]
    assert "\nforged line" not in err and "sEcReTpAtHoFtHeHoOk" not in err
    assert "no video" in err and "clip\\\\u202e4pm.txt ⏎ forged line" in err  # refusals logged, names escaped
