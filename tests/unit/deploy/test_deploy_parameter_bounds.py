"""Every stack parameter has a type and a range (numbers) or a pattern (text), so CloudFormation refuses an absurd
value at deploy time with the parameter named, before any function reads it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from rlinf_aws.router_lambda import RouterSettings
from rlinf_bench.errors import ConfigError


def test_every_parameter_is_bounded(template: dict[str, Any]) -> None:
    for name, param in template["Parameters"].items():
        if param["Type"] == "Number":
            assert {"MinValue", "MaxValue"} <= set(param), f"{name}: a number needs MinValue and MaxValue"
        else:
            assert "AllowedPattern" in param or "AllowedValues" in param, f"{name}: text needs a pattern"


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        ("IntakeConfig", "ssm:/rlinf-bench/intake", "ssm:/other/intake"),
        ("IntakeConfig", "s3://my-bucket/config/intake.yaml", "s3://My Bucket/x"),
        ("IntakeConfig", "", "/etc/passwd"),
        ("CheckpointBucketName", "rlinf-checkpoints", "Rlinf_Checkpoints"),
    ],
)
def test_a_malformed_text_parameter_is_refused_by_its_pattern(
    template: dict[str, Any], name: str, good: str, bad: str
) -> None:
    pattern = template["Parameters"][name]["AllowedPattern"]
    assert re.fullmatch(pattern, good)
    assert not re.fullmatch(pattern, bad)


def test_max_age_ends_before_the_intake_queue_moves_a_waiting_message_to_its_dlq(template: dict[str, Any]) -> None:
    queue = template["Resources"]["IntakeQueue"]["Properties"]
    redriven_after_s = (queue["RedrivePolicy"]["maxReceiveCount"] - 1) * queue["VisibilityTimeout"]
    assert template["Parameters"]["MaxAgeSeconds"]["MaxValue"] < redriven_after_s


BASE = {"STATE_MACHINE_ARN": "arn", "IDEMPOTENCY_TABLE": "t", "DEAD_LETTER_QUEUE_URL": "https://q"}


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("QUIET_PERIOD_S", "inf"),
        ("QUIET_PERIOD_S", "nan"),
        ("QUIET_PERIOD_S", "-1"),
        ("QUIET_PERIOD_S", "1e9"),
        ("MAX_AGE_S", "0"),
        ("MAX_AGE_S", "Infinity"),
        ("MAX_AGE_S", "six hours"),
        ("IDEMPOTENCY_EXPIRY_S", "-5"),
        ("IDEMPOTENCY_EXPIRY_S", "1.5e12"),
        ("IDEMPOTENCY_EXPIRY_S", "3600.5"),
    ],
)
def test_a_router_environment_override_out_of_range_is_refused_at_load_naming_it(variable: str, value: str) -> None:
    with pytest.raises(ConfigError) as info:
        RouterSettings.from_env({**BASE, variable: value})
    assert f"{variable}={value!r}" in str(info.value) and "from " in str(info.value)


def test_the_stack_defaults_read_back_as_router_settings(template: dict[str, Any]) -> None:
    params = template["Parameters"]
    env = {**BASE, "QUIET_PERIOD_S": str(params["QuietPeriodSeconds"]["Default"])}
    env["MAX_AGE_S"] = str(params["MaxAgeSeconds"]["MaxValue"])
    settings = RouterSettings.from_env(env)
    assert (settings.quiet_period_s, settings.max_age_s) == (60.0, 32400.0)
