"""The failure notice says what to run once the cause is fixed: on one machine the user's own command (the
embedded default passes it in RERUN_COMMAND), on a deployed stack ``rlinf-bench trigger --rerun``."""

from __future__ import annotations

from typing import Any

from rlinf_aws.lambda_settings import PipelineSettings
from rlinf_aws.state_notify_failure import notify_failure
from rlinf_bench.contracts.workflow import FailureNotifyInput, StateError


class _Sns:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def publish(self, **kwargs: Any) -> dict[str, str]:
        self.sent.append(kwargs)
        return {"MessageId": "m-1"}


def _notice(rerun: str) -> str:
    failure = FailureNotifyInput(execution="demo-s200-a1", stage="plan", error=StateError(error="E", cause="boom"))
    return notify_failure(failure, sns=_Sns(), topic_arn="arn:aws:sns:us-east-1:1:t", rerun=rerun).text


def test_given_the_embedded_default_then_the_notice_names_the_users_command_not_a_stack_command() -> None:
    local = "rlinf-bench pipeline demo-out/runs/demo/checkpoints/global_step_200 --out X (finished runs are kept)"
    settings = PipelineSettings.from_env({"RERUN_COMMAND": local})

    text = _notice(settings.rerun_command)

    assert f"re-run with: {local}" in text and "trigger --rerun" not in text


def test_given_a_deployed_stack_then_the_notice_names_trigger_rerun() -> None:
    assert "re-run with: rlinf-bench trigger --rerun" in _notice(PipelineSettings.from_env({}).rerun_command)
