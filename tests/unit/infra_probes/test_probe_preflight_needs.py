"""Each probe's start-up checks ask only for what that probe needs: a storage probe on a machine without a GPU
logs no failed GPU check, a GPU probe still checks the GPU, and MLflow is checked only where a probe reads it."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from infra_probes.probe_cli import build_parser, probe_needs
from infra_probes.probe_cli import main as probe_main


def test_given_a_storage_probe_then_its_preflight_checks_no_gpu_and_logs_no_failure(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO, logger="rlinf_bench.doctor")
    probe_main(["storage", "--path", str(tmp_path), "--size", "1M", "--block-size", "1M", "--json"])

    result = json.loads(capsys.readouterr().out)
    checks = {c["name"] for c in result["details"]["doctor"]["checks"]}
    assert checks and not any(name.startswith(("gpu", "mlflow")) for name in checks), checks
    assert "FAILED" not in caplog.text, caplog.text


@pytest.mark.parametrize(
    ("argv", "needs"),
    [
        (["storage", "--path", "/x"], ()),
        (["checkpoint_io", "--path", "/x"], ()),
        (["checkpoint_io", "--path", "/x", "--device", "cuda"], ("gpu",)),
        (["nccl", "--backend", "gloo"], ()),
        (["nccl", "--backend", "nccl"], ("gpu",)),
        (["gpu"], ("gpu",)),
        (["gpu", "--run-id", "r"], ("mlflow",)),
        (["throughput", "--run-id", "r"], ("mlflow",)),
    ],
)
def test_given_a_probe_then_it_needs_the_gpu_and_mlflow_only_where_it_uses_them(
    argv: list[str], needs: tuple[str, ...]
) -> None:
    assert probe_needs(build_parser().parse_args(argv)) == needs
