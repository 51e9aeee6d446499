"""What the embedded default says while it sets up: a first line at once, the moto adaptations counted on
stderr (each one only with -v), and stdout left to results."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from rlinf_local.demo_command import run_demo
from rlinf_local.embedded import Embedded
from rlinf_local.runs import print_adaptations
from rlinf_local.stack import Adaptation


class SetUpStopped(Exception):
    """Raised by a stand-in for the slow first step, so the test sees what was printed before it."""


def stop(*_: object, **__: object) -> None:
    raise SetUpStopped


def a_stack(n: int) -> SimpleNamespace:
    adaptations = [Adaptation(f"dropped Thing{k}", f"moto cannot make Thing{k}") for k in range(n)]
    return SimpleNamespace(stack=SimpleNamespace(adaptations=adaptations), aws=SimpleNamespace(endpoint="http://x:1"))


def test_given_no_v_then_the_adaptations_are_one_line_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    print_adaptations(a_stack(22))  # type: ignore[arg-type]

    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip().splitlines() == [
        "local stack from template.yaml in moto at http://x:1: applied 22 adaptations of template.yaml for moto; "
        "-v lists them"
    ]


def test_given_v_then_each_adaptation_is_listed_with_its_reason_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    print_adaptations(a_stack(3), verbose=True)  # type: ignore[arg-type]

    out, err = capsys.readouterr()
    assert out == ""
    assert "  - dropped Thing2: moto cannot make Thing2" in err.splitlines()
    assert len(err.strip().splitlines()) == 4


def test_given_the_demo_then_its_first_line_says_what_it_sets_up_before_the_checkpoints_are_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("rlinf_local.demo_command.write_demo_checkpoints", stop)

    with pytest.raises(SetUpStopped):
        run_demo(tmp_path / "demo-out")

    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"demo: writing 2 checkpoints of experiment demo under {tmp_path / 'demo-out' / 'runs'}")


def test_given_a_local_stack_then_it_says_so_before_samtranslator_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("rlinf_local.embedded.transformed_template", stop)

    with pytest.raises(SetUpStopped), Embedded(tmp_path):
        pass

    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("starting the local stack: template.yaml through samtranslator into a private moto account")
