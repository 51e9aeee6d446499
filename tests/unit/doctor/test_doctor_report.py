"""The report a user reads: statuses that add up, a fix on every problem, severity by target."""

from __future__ import annotations

import pytest

from rlinf_bench.doctor import CheckResult, CheckStatus, DoctorContext, DoctorReport, Target
from rlinf_bench.doctor.context import AREAS, timed
from rlinf_doctor.check_runner import CHECKS, selected


def _report() -> DoctorReport:
    return DoctorReport(
        target=Target.EVAL,
        wall_s=1.5,
        checks=[
            CheckResult(name="python.version", status=CheckStatus.PASS, measured="Python 3.11"),
            CheckResult(name="gpu.nvml", status=CheckStatus.SKIP, measured="no GPU", fix="run on a GPU node"),
            CheckResult(name="libero.assets", status=CheckStatus.FAIL, measured="no assets", fix="make setup"),
        ],
    )


def test_given_a_report_then_counts_add_up_and_the_summary_says_failed() -> None:
    report = _report()
    assert sum(report.counts().values()) == len(report.checks) == 3
    assert not report.ok and [c.name for c in report.failures] == ["libero.assets"]
    assert report.summary() == "doctor --for eval: FAILED: 1 pass, 0 warn, 1 fail, 1 skip (3 checks, 1.5 s)"


def test_given_a_failed_check_then_its_line_and_the_failure_message_carry_the_fix() -> None:
    text = _report().to_text()
    assert "FAIL  libero.assets" in text and "fix:" in text and "make setup" in text
    assert _report().failure_message() == "doctor check libero.assets failed: no assets; fix: make setup"


@pytest.mark.parametrize(
    ("target", "area", "expected"),
    [
        (Target.PROBE, "gpu", CheckStatus.FAIL),
        (Target.LOCAL, "gpu", CheckStatus.WARN),
        (Target.DEPLOY, "k8s", CheckStatus.FAIL),
        (Target.LOCAL, "k8s", CheckStatus.WARN),
        (Target.EVAL, "libero", CheckStatus.FAIL),
    ],
)
def test_given_a_problem_then_it_fails_only_where_the_target_needs_that_area(
    target: Target, area: str, expected: CheckStatus
) -> None:
    assert DoctorContext(target=target).problem(f"{area}.x", "m", "f").status is expected


def test_given_only_then_areas_and_dotted_names_select_checks() -> None:
    ctx = DoctorContext(target=Target.EVAL, only=["rendering", "libero.assets"])
    assert [sel for sel, _ in selected(ctx)] == [
        "libero.assets",
        "rendering.mujoco_gl",
        "rendering.egl",
        "rendering.spawned_frame",
    ]
    # aws/k8s belong to deploy and local, not to eval
    assert {s.split(".")[0] for s, _ in selected(DoctorContext(target=Target.EVAL))} == set(AREAS[Target.EVAL])
    assert len(CHECKS) == len({sel for sel, _ in CHECKS})


def test_given_a_check_that_raises_then_it_becomes_a_named_problem_not_a_traceback() -> None:
    def broken() -> CheckResult:
        raise RuntimeError("boom")

    [result] = timed("libero.env", broken, DoctorContext(target=Target.EVAL))
    assert result.status is CheckStatus.FAIL and "RuntimeError: boom" in result.measured and result.fix


def test_given_policy_specs_then_the_server_uri_and_the_runners_patience_are_read() -> None:
    from rlinf_doctor.preflight import policy_servers, policy_wait

    assert policy_servers("server:ws://h:8000?retries=2") == ["ws://h:8000"]
    assert policy_servers("builtin:demo") == [] and policy_wait("builtin:demo") == 0.0
    # the client's default schedule: 0.5, 1, 2, 4, 8 and three waits capped at 10 s
    assert policy_wait("server:ws://h:8000") == 45.5
    assert policy_wait("server:ws://h:8000?retries=0") == 0.0
    assert policy_wait("server:ws://h:8000?retries=2&backoff_s=1") == 3.0


def test_given_a_result_name_or_an_unknown_name_for_only_then_its_check_runs_or_the_choices_are_named() -> None:
    from rlinf_bench.errors import ConfigError
    from rlinf_doctor.check_runner import check_selectors

    assert [sel for sel, _ in selected(DoctorContext(target=Target.PROBE, only=["gpu.nvml"]))] == ["gpu"]
    check_selectors(["gpu.nvml", "rendering", "libero.assets", "rendering.egl_cuda_map", "k8s.rbac"])
    with pytest.raises(
        ConfigError, match=r"--only 'gpus' selects no check; use an area or a check: aws, canary, canary.sim, gpu"
    ):
        check_selectors(["gpus"])
