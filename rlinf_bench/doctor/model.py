"""What ``rlinf-bench doctor`` reports: one result per check, each with what it measured and the fix."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CheckResult", "CheckStatus", "DoctorReport", "Target"]


class CheckStatus(StrEnum):
    """``fail`` stops a run of the target; ``warn`` may change results or slow a run; ``skip`` was not checked."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


class Target(StrEnum):
    """What the environment is checked for (``--for``)."""

    LOCAL = "local"
    EVAL = "eval"
    PROBE = "probe"
    DEPLOY = "deploy"


class CheckResult(BaseModel):
    """The outcome of one named check."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Stable dotted name, e.g. 'libero.assets'; the part before the dot is its area")
    status: CheckStatus
    measured: str = Field(description="What was found, with figures (versions, paths, times)")
    fix: str = Field(default="", description="What to do about a warn/fail/skip; empty on pass")
    seconds: float = Field(default=0.0, ge=0, description="Time the check took")
    details: dict[str, Any] = Field(default_factory=dict)

    @property
    def area(self) -> str:
        return self.name.split(".", 1)[0]

    def line(self) -> str:
        """One human line: status, name, measurement (and the fix on the next line)."""
        text = f"{self.status.value.upper():<4}  {self.name:<24} {self.measured}"
        if self.fix and self.status is not CheckStatus.PASS:
            text += f"\n      {'fix:':<24} {self.fix}"
        return text


class DoctorReport(BaseModel):
    """All checks of one doctor run; recorded as is in eval and probe provenance."""

    model_config = ConfigDict(extra="forbid")

    target: Target
    started_at: str = ""
    wall_s: float = 0.0
    checks: list[CheckResult] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no check failed (warnings do not stop a run)."""
        return not self.failures

    @property
    def failures(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status is CheckStatus.FAIL]

    def counts(self) -> dict[str, int]:
        """Checks per status; the counts add up to ``len(checks)``."""
        return {s.value: sum(1 for c in self.checks if c.status is s) for s in CheckStatus}

    def summary(self) -> str:
        """The closing line, e.g. ``doctor --for eval: 9 pass, 2 warn, 1 fail, 3 skip (15 checks, 4.2 s)``."""
        counts = ", ".join(f"{n} {s}" for s, n in self.counts().items())
        verdict = "OK" if self.ok else "FAILED"
        return f"doctor --for {self.target.value}: {verdict}: {counts} ({len(self.checks)} checks, {self.wall_s:.1f} s)"

    def to_text(self) -> str:
        """Every check, one line each (fix below), then the summary."""
        return "\n".join([*(c.line() for c in self.checks), self.summary()])

    def record(self) -> dict[str, Any]:
        """The report as JSON-ready data, for a result's provenance."""
        return self.model_dump(mode="json")

    def failure_message(self) -> str:
        """The failed checks with their fixes, as one message for an error or a result file."""
        return "; ".join(f"doctor check {c.name} failed: {c.measured}; fix: {c.fix}" for c in self.failures)
