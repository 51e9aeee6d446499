"""``rlinf-bench render-jobs``: YAML ready for kubectl apply, or a clear error and exit status 2."""

from __future__ import annotations

from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from rlinf_cli.main import main
from tests.unit.k8s.conftest import K8S_SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[3]


def test_given_the_example_request_when_rendering_then_one_valid_yaml_per_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(
        ["render-jobs", "--request", str(REPO / "examples/eval-request.yaml"), "--out", str(tmp_path), "--env", "A=b"]
    )

    printed = capsys.readouterr().out.split()
    files = sorted(tmp_path.glob("*.yaml"))
    assert rc == 0
    assert sorted(printed) == [str(f) for f in files]
    assert len(files) == 2 * 3 + 3
    for f in files:
        docs = list(yaml.safe_load_all(f.read_text()))
        for d in docs:
            kubernetes_validate.validate(d, K8S_SCHEMA_VERSION, strict=True)
        container = docs[-1]["spec"]["template"]["spec"]["containers"][0]
        assert {"name": "A", "value": "b"} in container["env"]
    nccl = next(f for f in files if "nccl" in f.name)
    assert [d["kind"] for d in yaml.safe_load_all(nccl.read_text())] == ["Service", "Job"]


def test_given_a_request_with_an_unknown_suite_when_rendering_then_exit_2_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    req = tmp_path / "req.yaml"
    req.write_text(
        "checkpoint: {uri: /fsx/c, experiment: e, global_step: 1}\nsuites: [{name: libero_5}]\nimage: img:1\nprobes: []\n"
    )

    rc = main(["render-jobs", "--request", str(req), "--out", str(tmp_path / "out")])

    assert rc == 2
    assert "libero_5" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("checkpoint: [unclosed", "not valid YAML"),
        ("- a list", "must hold a mapping"),
        ("checkpoint: {uri: /c, experiment: e}\nimage: i\n", "checkpoint.global_step"),
    ],
)
def test_given_a_malformed_request_file_then_the_error_names_the_file_and_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, fragment: str
) -> None:
    req = tmp_path / "req.yaml"
    req.write_text(content)

    rc = main(["render-jobs", "--request", str(req), "--out", str(tmp_path / "out")])

    err = capsys.readouterr().err
    assert rc == 2
    assert fragment in err and str(req) in err


def test_given_a_bad_env_flag_then_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        [
            "render-jobs",
            "--request",
            str(REPO / "examples/eval-request.yaml"),
            "--out",
            str(tmp_path),
            "--env",
            "NOVALUE",
        ]
    )

    assert rc == 2
    assert "NAME=VALUE" in capsys.readouterr().err
