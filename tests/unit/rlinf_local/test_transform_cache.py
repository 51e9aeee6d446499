"""samtranslator's expansion is reused while nothing it reads changes, and made again when anything does."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from rlinf_local.stack import TOOLS_PYTHON, transformed_template
from rlinf_local.transform_cache import cached_transform, transform_digest

REPO = Path(__file__).resolve().parents[3]


class Counting:
    """A stand-in transform that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> dict[str, Any]:
        self.calls += 1
        return {"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}, "call": self.calls}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "statemachine").mkdir()
    (tmp_path / "template.yaml").write_text("Resources: {}\n")
    (tmp_path / "statemachine" / "flow.asl.json").write_text('{"StartAt": "A"}')
    (tmp_path / "transform.py").write_text("print('{}')\n")
    return tmp_path


def digest(project: Path, region: str = "us-east-1") -> str:
    return transform_digest(project / "template.yaml", project / "transform.py", Path(os.__file__), region)


def test_given_nothing_changed_then_the_second_start_reads_the_kept_expansion(project: Path, tmp_path: Path) -> None:
    transform = Counting()
    first = cached_transform(digest(project), transform, tmp_path / "cache")
    second = cached_transform(digest(project), transform, tmp_path / "cache")

    assert transform.calls == 1 and first == second


@pytest.mark.parametrize(
    "change",
    [
        lambda p: (p / "template.yaml").write_text("Resources: {A: {}}\n"),
        lambda p: (p / "statemachine" / "flow.asl.json").write_text('{"StartAt": "B"}'),
        lambda p: (p / "statemachine" / "other.asl.json").write_text("{}"),
        lambda p: (p / "transform.py").write_text("print('[]')\n"),
    ],
    ids=["template", "definition", "new-definition", "script"],
)
def test_given_any_input_changed_then_the_expansion_is_made_again(project: Path, change: Any) -> None:
    before = digest(project)
    change(project)

    assert digest(project) != before


def test_given_another_region_then_another_expansion(project: Path) -> None:
    assert digest(project, "eu-west-1") != digest(project)


def test_given_a_corrupt_or_foreign_cache_file_then_it_is_made_again_and_replaced(
    project: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    kept = cache / "sam-transform" / f"{digest(project)}.json"
    kept.parent.mkdir(parents=True)
    transform = Counting()
    for text in ('{"Resources": {"Queue"', "[1, 2]"):  # cut short; valid JSON but not a template
        kept.write_text(text)
        assert cached_transform(digest(project), transform, cache)["Resources"]
    assert transform.calls == 2
    assert cached_transform(digest(project), transform, cache)["call"] == 2  # the rewritten file is read back


def test_given_a_cache_folder_it_cannot_write_then_the_expansion_is_still_returned(
    project: Path, tmp_path: Path
) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    transform = Counting()

    assert cached_transform(digest(project), transform, blocked)["call"] == 1
    assert cached_transform(digest(project), transform, blocked)["call"] == 2


@pytest.mark.skipif(not TOOLS_PYTHON.exists(), reason="aws-sam-translator is not installed: make setup-sam")
def test_given_the_real_template_then_the_kept_expansion_is_samtranslators(tmp_path: Path) -> None:
    fresh = transformed_template(cache_dir=tmp_path)
    kept = transformed_template(cache_dir=tmp_path)

    assert kept == fresh and "AWS::StepFunctions::StateMachine" in {r["Type"] for r in fresh["Resources"].values()}
    assert len(list((tmp_path / "sam-transform").glob("*.json"))) == 1
