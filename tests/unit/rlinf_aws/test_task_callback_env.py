"""The Job reads its heartbeat period from the environment: anything but a positive number falls back."""

from __future__ import annotations

import pytest

from rlinf_aws.task_callback import HEARTBEAT_ENV, TOKEN_ENV, TaskCallback


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-60", "0", "soon"])
def test_an_unusable_heartbeat_period_falls_back_to_the_default(value: str) -> None:
    callback = TaskCallback.from_env({TOKEN_ENV: "tok", HEARTBEAT_ENV: value}, sfn_factory=lambda: None)
    assert callback is not None and callback.heartbeat_interval_s == 300.0  # 1800 s / 3, capped at 300


def test_a_short_heartbeat_period_beats_three_times_within_it() -> None:
    callback = TaskCallback.from_env({TOKEN_ENV: "tok", HEARTBEAT_ENV: "90"}, sfn_factory=lambda: None)
    assert callback is not None and callback.heartbeat_interval_s == 30.0
