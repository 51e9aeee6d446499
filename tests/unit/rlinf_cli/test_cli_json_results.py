"""``--json`` on the commands that produce files: ``report`` and ``render-jobs`` say where they wrote them,
as one JSON document on stdout and nothing else there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlinf_cli.main import main
from tests.unit.reporting.sitefactory import two_checkpoints

REPO = Path(__file__).resolve().parents[3]


def test_given_report_json_then_stdout_names_every_file_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = []
    for i, report in enumerate(two_checkpoints()):
        path = tmp_path / f"r{i}.json"
        path.write_text(report.to_json())
        paths.append(str(path))

    assert main(["report", "--reports", *paths, "--out", str(tmp_path / "site"), "--json"]) == 0

    doc = json.loads(capsys.readouterr().out)
    assert len(doc["checkpoints"]) == 2 and doc["pages"] > 0
    for key in ("index", "html", "markdown", "plot"):
        assert Path(doc[key]).is_file() and Path(doc[key]).is_relative_to(tmp_path / "site")


def test_given_render_jobs_json_then_stdout_lists_the_manifests_in_submit_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    request = str(REPO / "examples/eval-request.yaml")

    assert main(["render-jobs", "--request", request, "--out", str(tmp_path), "--json"]) == 0

    manifests = json.loads(capsys.readouterr().out)["manifests"]
    assert sorted(manifests) == sorted(str(p) for p in tmp_path.glob("*.yaml")) and len(manifests) == 9
