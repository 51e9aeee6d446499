"""Which checks run for a target, in which order, and the report they make."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from datetime import UTC, datetime

from rlinf_bench.doctor.context import AREAS, DoctorContext, timed
from rlinf_bench.doctor.model import CheckResult, DoctorReport
from rlinf_bench.errors import ConfigError
from rlinf_doctor import (
    checks_canary,
    checks_cloud,
    checks_env,
    checks_gpu,
    checks_libero,
    checks_remote,
    checks_render,
)

Check = Callable[[DoctorContext], CheckResult | list[CheckResult]]

#: Every check, in report order: (selector, function). A selector is an area or a dotted check name.
CHECKS: tuple[tuple[str, Check], ...] = (
    ("python", checks_env.check_python),
    ("packages", checks_env.check_packages),
    ("libero.assets", checks_libero.check_assets),
    ("libero.config", checks_libero.check_config),
    ("libero.env", checks_libero.check_env_step),
    ("canary.sim", checks_canary.check_sim_canary),
    ("rendering.mujoco_gl", checks_render.check_mujoco_gl),
    ("rendering.egl", checks_render.check_egl),
    ("rendering.spawned_frame", checks_render.check_spawned_frame),
    ("gpu", checks_gpu.check_gpu),
    ("policy", checks_remote.check_policy_servers),
    ("mlflow", checks_remote.check_mlflow),
    ("aws", checks_cloud.check_aws),
    ("k8s", checks_cloud.check_k8s),
)


def selected(ctx: DoctorContext) -> list[tuple[str, Check]]:
    """The checks of ``ctx.target`` narrowed by ``ctx.only``."""
    areas = AREAS[ctx.target]
    return [(sel, fn) for sel, fn in CHECKS if sel.split(".", 1)[0] in areas and ctx.wants(sel)]


def check_selectors(only: list[str]) -> None:
    """Raise ConfigError naming the valid choices when an ``--only`` value selects no check at all."""
    probe = DoctorContext(only=[])
    for value in only:
        probe.only = [value]
        if not any(probe.wants(sel) for sel, _ in CHECKS):
            choices = sorted({sel.split(".", 1)[0] for sel, _ in CHECKS} | {sel for sel, _ in CHECKS})
            raise ConfigError(f"--only {value!r} selects no check; use an area or a check: {', '.join(choices)}")


def run_doctor(ctx: DoctorContext) -> DoctorReport:
    """Run the selected checks; each reports, none raises."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    results: list[CheckResult] = []
    for sel, fn in selected(ctx):
        results.extend(timed(sel, functools.partial(fn, ctx), ctx))
    return DoctorReport(
        target=ctx.target, started_at=started, wall_s=round(time.perf_counter() - t0, 2), checks=results
    )
