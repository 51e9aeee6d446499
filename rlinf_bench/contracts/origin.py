"""How a request was started, so that a message's fix names a lever the user has.

A verdict that decided nothing says what to change for one. The same setting comes from different places:
``--max-steps`` on ``evaluate`` or ``pipeline``, ``max_steps`` in a config file's suite, or the demo's own
short budget (whose lever is ``make demo DEMO_ARGS=--paper``). The command that builds the matrix knows
which; it records it here, the request and the report carry it, and the verdict's reason uses it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.contracts.limits import Name, SettingText

__all__ = ["RequestOrigin"]


class RequestOrigin(BaseModel):
    """What the user ran and, per episode setting, how to change it in their own terms."""

    model_config = ConfigDict(extra="forbid")

    command: SettingText = Field(
        default="",
        description="What started the request, as the user typed it (e.g. 'make demo', 'rlinf-bench pipeline'); "
        "empty: an intake config (the deployed stack)",
    )
    levers: dict[Name, SettingText] = Field(
        default_factory=dict,
        description="Episode setting (max_steps, settle_steps, settle_gripper, render_resolution) -> what to do to "
        "get the protocol's own value back, e.g. 'run make demo DEMO_ARGS=--paper'; a setting not listed gets "
        "'leave out --<flag>'",
    )
