"""What one doctor run is asked to check, and how bad a problem is for that target."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rlinf_bench.doctor.model import CheckResult, CheckStatus, Target

__all__ = ["AREAS", "REQUIRED", "DoctorContext"]

#: Areas checked for each target, in report order.
AREAS: dict[Target, tuple[str, ...]] = {
    Target.LOCAL: ("python", "packages", "libero", "canary", "rendering", "gpu", "policy", "mlflow", "aws", "k8s"),
    Target.EVAL: ("python", "packages", "libero", "canary", "rendering", "gpu", "policy", "mlflow"),
    Target.PROBE: ("python", "packages", "gpu", "mlflow"),
    Target.DEPLOY: ("python", "packages", "aws", "k8s", "mlflow"),
}
#: Areas whose problems fail the target; elsewhere a problem is a warning. ``policy`` and ``mlflow``
#: only fail when something was named (a server, a tracking URI): unnamed, they are skipped.
REQUIRED: dict[Target, frozenset[str]] = {
    # canary: opt-in (--only canary), and then a moved episode fails the run
    Target.LOCAL: frozenset({"python", "libero", "canary", "rendering", "policy", "mlflow"}),
    Target.EVAL: frozenset({"python", "libero", "canary", "rendering", "policy", "mlflow"}),
    Target.PROBE: frozenset({"python", "gpu", "mlflow"}),
    Target.DEPLOY: frozenset({"python", "aws", "k8s", "mlflow"}),
}
#: Extras of the rlinf-bench distribution each target cannot do without.
REQUIRED_EXTRAS: dict[Target, tuple[str, ...]] = {
    Target.LOCAL: (),
    Target.EVAL: ("libero",),
    Target.PROBE: ("probes",),
    Target.DEPLOY: ("aws", "k8s"),
}


class DoctorContext(BaseModel):
    """Options of one doctor run (from the command line, the environment or a Job's request)."""

    model_config = ConfigDict(extra="forbid")

    target: Target = Target.LOCAL
    only: list[str] = Field(default_factory=list, description="Check names or areas to run; empty: all of the target")
    quick: bool = Field(default=False, description="Skip the slow checks (building a LIBERO env)")
    policy_servers: list[str] = Field(default_factory=list, description="ws:// or http(s):// policy server URIs")
    policy_wait_s: float = Field(default=0.0, ge=0, description="Keep retrying a policy server this long (starting)")
    tracking_uri: str = Field(default="", description="MLflow tracking URI (default $MLFLOW_TRACKING_URI)")
    experiment: str = "RLinf"
    write_test: bool = Field(default=True, description="Create (then delete) an MLflow run to prove write access")
    kubeconfig: str = Field(default="", description="kubeconfig path (default $KUBECONFIG or ~/.kube/config)")
    kube_context: str = ""
    eks_cluster: str = ""
    namespace: str = "rlinf-eval"
    gpu_node_selector: dict[str, str] = Field(default_factory=lambda: {"role": "gpu-training"})
    gpu_taint_key: str = "nvidia.com/gpu"
    region: str = ""
    stack_name: str = Field(default="", description="CloudFormation stack of the intake (default $RLINF_BENCH_STACK)")
    cache_dir: Path | None = Field(default=None, description="rlinf-bench cache (LIBERO config); default as the runner")
    timeout_s: float = Field(default=5.0, gt=0, description="Per network call")
    render_timeout_s: float = Field(default=120.0, gt=0, description="Spawned render worker, LIBERO env step")
    canary_timeout_s: float = Field(
        default_factory=lambda: float(os.environ.get("RLINF_BENCH_CANARY_TIMEOUT_S") or 900),
        gt=0,
        description="The simulator canary (4 LIBERO episodes in a child interpreter)",
    )

    def wants(self, name: str) -> bool:
        """True when check ``name`` is selected by ``only``: its name, its area, or a result it reports
        (``gpu.nvml`` runs the ``gpu`` check, ``rendering.egl_cuda_map`` the ``rendering.egl`` one)."""
        if not self.only:
            return True
        area = name.split(".", 1)[0]
        return any(sel in (name, area) or sel.startswith((name + ".", name + "_")) for sel in self.only)

    def required(self, area: str) -> bool:
        return area in REQUIRED[self.target]

    def env(self, name: str, default: str = "") -> str:
        return os.environ.get(name, default)

    # -- result builders: checks return these, the runner times them --------------------------
    def ok(self, name: str, measured: str, **details: Any) -> CheckResult:
        return CheckResult(name=name, status=CheckStatus.PASS, measured=measured, details=details)

    def warn(self, name: str, measured: str, fix: str, **details: Any) -> CheckResult:
        return CheckResult(name=name, status=CheckStatus.WARN, measured=measured, fix=fix, details=details)

    def problem(self, name: str, measured: str, fix: str, **details: Any) -> CheckResult:
        """A failure where the target needs this area, a warning elsewhere."""
        status = CheckStatus.FAIL if self.required(name.split(".", 1)[0]) else CheckStatus.WARN
        return CheckResult(name=name, status=status, measured=measured, fix=fix, details=details)

    def skip(self, name: str, measured: str, fix: str = "", **details: Any) -> CheckResult:
        return CheckResult(name=name, status=CheckStatus.SKIP, measured=measured, fix=fix, details=details)


def timed(name: str, fn: Callable[[], CheckResult | list[CheckResult]], ctx: DoctorContext) -> list[CheckResult]:
    """Run one check; an unexpected exception becomes a named problem, never a traceback."""
    t0 = time.perf_counter()
    try:
        out = fn()
    except Exception as exc:  # a check must report, not crash the report
        out = ctx.problem(
            name,
            f"the check itself raised {type(exc).__name__}: {exc}",
            "run `rlinf-bench -v doctor` for details and report it if the environment looks right",
        )
    results = out if isinstance(out, list) else [out]
    elapsed = (time.perf_counter() - t0) / max(1, len(results))
    return [r.model_copy(update={"seconds": round(r.seconds or elapsed, 3)}) for r in results]
