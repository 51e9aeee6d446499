"""The build and check helpers in deploy/tools: artifact slimming and the argued checkov skip list."""

from __future__ import annotations

import importlib.util
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[3]

TOOLS = REPO / "deploy" / "tools"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


slim = load("slim_artifact")
skips = load("checkov_skips")


def fake_dist(root: Path, name: str, version: str, files: dict[str, str]) -> None:
    info = root / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    record = [f"{rel},," for rel in files] + [f"{info.name}/RECORD,,", "../../bin/outside,,"]
    (info / "RECORD").write_text("\n".join(record))


def test_given_a_function_build_then_what_the_layer_holds_is_dropped_and_the_rest_kept(tmp_path: Path) -> None:
    fake_dist(tmp_path, "pydantic_core", "2.50.5", {"pydantic_core/__init__.py": "x" * 1000})
    fake_dist(tmp_path, "PyYAML", "6.0.4", {"yaml/__init__.py": "y", "_yaml/__init__.py": "z"})
    fake_dist(tmp_path, "kubernetes", "37.0.1", {"kubernetes/__init__.py": "k", "kubernetes/aio/big.py": "a" * 10})
    fake_dist(
        tmp_path,
        "numpy",
        "1.26.4",
        {"numpy/__init__.py": "n", "numpy/core/tests/test_x.py": "t", "numpy/core/x.h": "h", "numpy/__init__.pyi": "i"},
    )
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "kubectl-ish").write_text("#!/local/python")
    layer = tmp_path / "layer.txt"
    layer.write_text("# pinned\npydantic-core==2.50.5\npyyaml==6.0.4  # comment\n")

    assert slim.main([str(tmp_path), "--without-layer", str(layer)]) == 0

    left = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert left == [
        "kubernetes-37.0.1.dist-info/RECORD",
        "kubernetes/__init__.py",
        "layer.txt",
        "numpy-1.26.4.dist-info/RECORD",
        "numpy/__init__.py",
    ]


def test_given_a_missing_folder_or_requirements_then_slim_says_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert slim.main([str(tmp_path / "nope")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert slim.main([str(tmp_path), "--without-layer", str(tmp_path / "x.txt")]) == 2
    assert "no requirements file" in capsys.readouterr().err


def test_given_the_layer_pins_then_they_are_exact_and_complete() -> None:
    lines = [
        line.split("#")[0].strip()
        for line in (REPO / "layers/shared/requirements.txt").read_text().splitlines()
        if line.split("#")[0].strip()
    ]
    assert all("==" in line for line in lines)  # slim drops by name: the layer must be the full, pinned closure
    pinned = {slim.normalize(line.split("==")[0]) for line in lines}
    assert {"aws-lambda-powertools", "pydantic", "pydantic-core", "pyyaml", "tenacity"} <= pinned
    # Closed under dependencies (as installed here; Lambda's python3.12, no extras): nothing the layer's
    # packages need is left for a function to bring, or to lose to the slimming.
    lambda_env = {"python_version": "3.12", "python_full_version": "3.12.1", "extra": "", "sys_platform": "linux"}
    for name in pinned:
        for raw in metadata.requires(name) or []:
            req = Requirement(raw)
            if req.marker is None or req.marker.evaluate(lambda_env):
                assert slim.normalize(req.name) in pinned, f"{name} needs {req.name}, which the layer does not pin"


def test_given_the_committed_skip_list_then_every_skip_is_argued_and_real_findings_are_not_skipped() -> None:
    listed = skips.load_skips(TOOLS / "checkov-skips.yaml")
    assert listed
    assert {"CKV_K8S_43", "CKV2_K8S_6"}.isdisjoint(listed)  # fixed: digests, NetworkPolicy
    assert all(len(reason.split()) >= 10 for reason in listed.values())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("CKV_AWS_27:\n", "needs a reason"),
        ("CKV_AWS_27: ok\n", "needs a reason"),
        ("S3_BUCKET_LOGGING: because we do not want it here\n", "is not a checkov check id"),
        ("- CKV_AWS_27\n", "expected a mapping"),
    ],
)
def test_given_an_unargued_skip_then_the_check_refuses_to_run(
    tmp_path: Path, text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "skips.yaml"
    path.write_text(text)
    assert skips.main([str(path)]) == 2
    assert message in capsys.readouterr().err
