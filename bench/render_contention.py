"""How much GPU time a suite's renders take from the policy, by how the renders are grouped into GL contexts.

On one H200 the whole-suite runs keep the policy's model thread busy 97-98 % of the time, yet GPU SM activity
stays at 55-62 %: the 30 workers' EGL renders time-slice the GPU with the policy's CUDA context (a bf16 matrix
product ran at 0.27 of its rate beside 15 rendering processes). Whether fewer GL contexts would give the policy
its GPU back, or whether the renders' own work is the cost, decides what to build. This bench measures it.

One LIBERO scene is built once and saved as a compiled MuJoCo model plus its state (``mj_saveModel``). Then,
for each layout below, ``--scenes`` copies of it are rendered the way a worker renders them (robosuite's
``GLContext``, one ``MjrContext`` per scene, both 256 px cameras read back), each scene paced at ``--rows-per-s``
policy rows per second (two camera renders per row, as a worker renders only the observation a policy reads).
Meanwhile this process runs GPU work back to back (``--load``: the 7B stand-in's largest bf16 matrix product,
or its whole forward as served) and samples the GPU (SM activity through GPM):

- ``none``: no renders; the GPU work alone;
- ``procs``: one process per scene, each with its own GL context (today's workers);
- ``contexts``: one process, one GL context per scene;
- ``shared``: one process, one GL context for every scene (one ``MjrContext`` each);
- ``groups``: ``--groups`` processes, each with one GL context for its share of the scenes;
- ``procs-pair``: as ``procs``, but both cameras are drawn before either is read back;
- ``batched``: one process, one GL context, every row due within ``--batch-ms`` drawn, then all read back.

The layouts run in turns, ``--rounds`` times; ratios are taken within a round. Every layout first renders each
scene once and must match, bit for bit, what robosuite's own ``MjSim.render`` gave for that state: a layout
that changed the pixels would change what the policy sees, and the bench refuses it.

``--mirrors drawn,skipped`` runs every rendering layout a second time per round with MuJoCo's mirror pass
dropped (``bench/scene_render.py``: the scene drawn again, mirrored, for each reflective plane or box). Those
runs change the reflecting faces' pixels, so they report how many pixels changed instead of being refused:
they measure what the pass costs the GPU, nothing a policy would be shown.

On a machine without CUDA (tests, this repository's CPU box) the GPU work is skipped and only the renders run.

Device use (after ``source bench/gpu_setup.sh``):
``python3 bench/render_contention.py --scenes 30 --rows-per-s 2 --seconds 15 --rounds 2 --out $OUT/render_contention.json``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_gpu_common import CAMERAS, GpmSampler, command_line, machine, results_path  # noqa: E402
from bench.scene_render import SceneFiles, SceneRenderer, build_renderers, export_scene, pixels_changed  # noqa: E402

LAYOUTS = ("none", "procs", "contexts", "shared", "groups", "procs-pair", "batched")
MIRRORS = ("drawn", "skipped")


def gemm_shape() -> tuple[int, int, int]:
    """The 7B stand-in's largest product (gate and up projections at once) at 8 rows of 601 tokens, as
    bench/forward_speed.py times it.

    Its shapes are imported here, not with this module: every render process imports this module again
    (spawned), and the policy's imports would be most of its start-up."""
    from bench.llama_policy import LLAMA_7B

    return 8 * 601, LLAMA_7B["hidden_size"], 2 * LLAMA_7B["intermediate_size"]


def render_rows(renderers: list[SceneRenderer], rows: list[int], plan: RenderPlan) -> list[list[np.ndarray]]:
    """One row of each scene in ``rows``, as the plan's mode draws and reads them; the images per row."""
    if plan.mode == "each":
        return [renderers[i].render(make_current=not plan.shared) for i in rows]
    for i in rows:  # every draw queued before the first read: the GPU can run them in one go
        renderers[i].draw_pair(make_current=not plan.shared)
    return [renderers[i].read_pair() for i in rows]


def render_process(files: SceneFiles, plan: RenderPlan, rows_per_s: float, barrier: Any, stop: Any, out: Any) -> None:
    """Render ``plan.scenes`` copies, each paced at ``rows_per_s`` rows, until ``stop``; put the figures on ``out``."""
    try:
        renderers = build_renderers(files, plan.scenes, plan.shared, plan.draw_mirrors)
        reference = np.load(files.reference)
        changed = [
            pixels_changed(image, reference[camera])
            for images in render_rows(renderers, list(range(plan.scenes)), plan)
            for camera, image in zip(CAMERAS, images, strict=True)
        ]
    except Exception as exc:  # the parent reports it with the layout
        barrier.abort()
        out.put({"error": f"{type(exc).__name__}: {exc}"})
        return
    barrier.wait()
    figures = paced(renderers, plan, rows_per_s, stop)
    for context in {id(r.context): r.context for r in renderers}.values():
        context.free()  # before exit: freed at interpreter shutdown, EGL is already gone and complains
    out.put({**figures, "identical": not any(changed), "pixels_changed": changed[: len(CAMERAS)]})


def paced(renderers: list[SceneRenderer], plan: RenderPlan, rows_per_s: float, stop: Any) -> dict[str, Any]:
    """Each scene's rows at ``rows_per_s`` (spread over the period, as workers' rows are) until ``stop``.

    ``batched`` waits until the oldest due row is ``batch_s`` late, then renders every due row at once."""
    period = 1.0 / rows_per_s
    t0 = time.perf_counter()
    due = [t0 + period * i / plan.scenes for i in range(plan.scenes)]
    latencies: list[float] = []
    late: list[float] = []
    while not stop.is_set():
        now = time.perf_counter()
        ready = [i for i in range(plan.scenes) if due[i] <= now]
        if not ready or (plan.mode == "batched" and now - min(due[i] for i in ready) < plan.batch_s):
            time.sleep(min(0.002 if ready else max(min(due) - now, 0.0), 0.05))
            continue
        if plan.mode != "batched":
            ready = ready[:1]
        late.extend(now - due[i] for i in ready)
        start = time.perf_counter()
        render_rows(renderers, ready, plan)
        latencies.extend([time.perf_counter() - start] * len(ready))
        for i in ready:
            due[i] += period
    return {"rows": len(latencies), "elapsed_s": time.perf_counter() - t0, "latency_s": latencies, "late_s": late}


class GpuLoad:
    """The GPU work beside the renders, back to back: the stand-in's largest bf16 product (``gemm``, rated in
    TFLOP/s), or the 7B stand-in's whole forward at ``rows`` rows (``forward``, ``backbone=lean-compiled`` as
    served, rated in rows/s)."""

    def __init__(self, kind: str = "gemm", rows: int = 6) -> None:
        import torch

        self.torch = torch
        self.kind = kind
        if kind == "forward":
            from bench.llama_policy import example_obs, make_policy

            self.policy = make_policy(backbone="lean-compiled", chunks="runner")
            self.obs = example_obs(rows, seed=rows)
            self.describe, self.unit, self.work_per_step = f"forward lean-compiled, {rows} rows", "rows/s", float(rows)
        else:
            m, k, n = gemm_shape()
            self.a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            self.b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
            # five products per synchronize, counted in TFLOP
            self.describe, self.unit, self.work_per_step = (
                f"bf16 product {(m, k, n)}",
                "TFLOP/s",
                5 * 2 * m * k * n / 1e12,
            )
        self.run(3.0)  # warm-up: kernels chosen (and compiled), clocks up

    def step(self) -> None:
        if self.kind == "forward":
            self.policy.infer(self.obs)  # ends with the actions on the host: synchronized
            return
        for _ in range(5):
            self.a @ self.b
        self.torch.cuda.synchronize()

    @staticmethod
    def available() -> bool:
        try:
            import torch
        except ImportError:
            return False
        return bool(torch.cuda.is_available())

    def run(self, seconds: float) -> float:
        """The rate over ``seconds``, in :attr:`unit`."""
        steps, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            self.step()
            steps += 1
        return self.work_per_step * steps / (time.perf_counter() - t0)


@dataclass(frozen=True)
class RenderPlan:
    """One render process of a layout: its scenes, whether they share one GL context, how rows are drawn."""

    scenes: int
    shared: bool
    #: each: both cameras rendered and read back in turn (robosuite); pair: both drawn (each into its own
    #: buffer), then both read; batched: every row due within batch_s drawn as pairs, then all read
    mode: str = "each"
    batch_s: float = 0.0
    #: False drops MuJoCo's mirror pass (a diagnostic: the reflecting faces' pixels change)
    draw_mirrors: bool = True


def layout_processes(
    layout: str, scenes: int, groups: int, batch_s: float = 0.05, mirrors: str = "drawn"
) -> list[RenderPlan]:
    """The render processes of a layout, drawing MuJoCo's mirror pass or not (``mirrors``)."""
    if mirrors not in MIRRORS:
        raise ValueError(f"unknown mirrors {mirrors!r}: choose from {', '.join(MIRRORS)}")
    return [replace(p, draw_mirrors=mirrors == "drawn") for p in _layout_plans(layout, scenes, groups, batch_s)]


def _layout_plans(layout: str, scenes: int, groups: int, batch_s: float) -> list[RenderPlan]:
    if layout == "none":
        return []
    if layout == "procs":
        return [RenderPlan(1, False)] * scenes
    if layout == "procs-pair":
        return [RenderPlan(1, False, "pair")] * scenes
    if layout == "contexts":
        return [RenderPlan(scenes, False)]
    if layout == "shared":
        return [RenderPlan(scenes, True)]
    if layout == "batched":
        return [RenderPlan(scenes, True, "batched", batch_s)]
    if layout == "groups":
        sizes = [scenes // groups + (1 if g < scenes % groups else 0) for g in range(groups)]
        return [RenderPlan(size, True) for size in sizes if size]
    raise ValueError(f"unknown layout {layout!r}: choose from {', '.join(LAYOUTS)}")


def variant_name(layout: str, mirrors: str) -> str:
    """How a layout's runs are keyed in the summary: the layout, marked when its mirror pass was dropped."""
    return layout if mirrors == "drawn" or layout == "none" else f"{layout}, mirrors skipped"


def run_layout(
    layout: str, args: argparse.Namespace, files: SceneFiles, load: GpuLoad | None, mirrors: str = "drawn"
) -> dict[str, Any]:
    """One layout: start its render processes, then the product and the GPU sampler for ``--seconds``."""
    ctx = mp.get_context("spawn")
    plan = layout_processes(layout, args.scenes, args.groups, args.batch_ms / 1000, mirrors)
    barrier, stop, out = ctx.Barrier(len(plan) + 1), ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=render_process, args=(files, p, args.rows_per_s, barrier, stop, out), daemon=True)
        for p in plan
    ]
    for p in procs:
        p.start()
    row: dict[str, Any] = {
        "layout": layout,
        "variant": variant_name(layout, mirrors),
        "mirrors": mirrors,
        "processes": len(plan),
        "gl_contexts": sum(1 if p.shared else p.scenes for p in plan),
    }
    try:
        barrier.wait(timeout=600)
    except Exception:
        stop.set()
    if not barrier.broken:
        with GpmSampler(0.5) as sampler:
            if load is not None:
                row["gpu_rate"] = round(load.run(args.seconds), 1)
            else:
                time.sleep(args.seconds)
        row["gpu"] = sampler.result
    stop.set()
    parts = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    errors = [p["error"] for p in parts if "error" in p]
    if errors:
        raise SystemExit(f"layout {layout}: a render process failed: {errors[0]}")
    if parts:
        latencies = [x for p in parts for x in p["latency_s"]]
        rows = sum(p["rows"] for p in parts)
        row.update(
            rows_rendered=rows,
            rows_per_s=round(rows / max(p["elapsed_s"] for p in parts), 1),
            render_ms_median=round(1000 * statistics.median(latencies), 2),
            render_ms_p90=round(1000 * float(np.percentile(latencies, 90)), 2),
            late_ms_median=round(1000 * statistics.median(x for p in parts for x in p["late_s"]), 2),
            identical_to_robosuite=all(p["identical"] for p in parts),
            pixels_changed=max((p["pixels_changed"] for p in parts), key=sum),
        )
    return row


def summarize(rows: list[dict[str, Any]], rounds: int) -> dict[str, Any]:
    """Per layout (and mirror variant): the GPU work's rate as a share of ``none`` in the same round, SM activity,
    render latency."""
    summary: dict[str, Any] = {}
    variants = list(dict.fromkeys(r.get("variant", r["layout"]) for r in rows))
    per_round = [rows[i * len(variants) : (i + 1) * len(variants)] for i in range(rounds)]
    for variant in variants:
        entry: dict[str, Any] = {}
        for rnd in per_round:
            row = next(r for r in rnd if r.get("variant", r["layout"]) == variant)
            alone = next((r for r in rnd if r["layout"] == "none"), {})
            if "gpu_rate" in row and "gpu_rate" in alone:
                entry.setdefault("gpu_rate_over_alone", []).append(round(row["gpu_rate"] / alone["gpu_rate"], 3))
            if "mean_sm_active_pct" in row.get("gpu", {}):
                entry.setdefault("sm_active_pct", []).append(row["gpu"]["mean_sm_active_pct"])
            if "render_ms_median" in row:
                entry.setdefault("render_ms_median", []).append(row["render_ms_median"])
                entry.setdefault("rows_per_s", []).append(row["rows_per_s"])
                entry.setdefault("identical_to_robosuite", []).append(row["identical_to_robosuite"])
            if row.get("mirrors") == "skipped" and "pixels_changed" in row:
                entry.setdefault("pixels_changed", []).append(row["pixels_changed"])
        summary[variant] = entry
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="libero_spatial")
    parser.add_argument("--task", type=int, default=0)
    parser.add_argument("--scenes", type=int, default=30, help="scenes rendered at once (the suite's workers)")
    parser.add_argument("--groups", type=int, default=5, help="render processes of the groups layout")
    parser.add_argument("--batch-ms", type=float, default=50.0, help="the batched layout's wait for more rows")
    parser.add_argument("--rows-per-s", type=float, default=2.0, help="policy rows per second per scene")
    parser.add_argument("--resolution", type=int, default=256, help="camera side in pixels")
    parser.add_argument("--seconds", type=float, default=15.0, help="measured time per layout")
    parser.add_argument("--rounds", type=int, default=2, help="all layouts, in turns, this many times")
    parser.add_argument("--layouts", default=",".join(LAYOUTS), help=f"comma-separated, from {', '.join(LAYOUTS)}")
    parser.add_argument(
        "--mirrors",
        default="drawn",
        help="comma-separated, from drawn, skipped: skipped reruns each layout without MuJoCo's mirror pass",
    )
    parser.add_argument("--load", choices=("gemm", "forward"), default="gemm", help="the GPU work beside the renders")
    parser.add_argument("--forward-rows", type=int, default=6, help="rows per forward with --load forward")
    parser.add_argument("--out", type=Path, help="result file (default: $OUT or a temporary file)")
    parser.add_argument("--update-results", action="store_true", help="allow an --out inside bench/results/")
    args = parser.parse_args(argv)
    out = results_path(args.out, update_results=args.update_results, name="render_contention.json")
    load = GpuLoad(args.load, args.forward_rows) if GpuLoad.available() else None
    layouts = [name.strip() for name in args.layouts.split(",") if name.strip()]
    unknown = sorted(set(layouts) - set(LAYOUTS))
    if unknown:
        parser.error(f"--layouts: unknown {', '.join(unknown)}; choose from {', '.join(LAYOUTS)}")
    mirrors = [name.strip() for name in args.mirrors.split(",") if name.strip()]
    if not mirrors or set(mirrors) - set(MIRRORS):
        parser.error(f"--mirrors: {args.mirrors!r}; give drawn, skipped or both, comma-separated")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="render-contention-") as folder:
        files = export_scene(args.suite, args.task, args.resolution, Path(folder))
        for _ in range(args.rounds):
            for layout in layouts:
                for variant in mirrors if layout != "none" else ["drawn"]:
                    rows.append(run_layout(layout, args, files, load, variant))
                    print(json.dumps(rows[-1]), flush=True)
    refused = [r["layout"] for r in rows if r["mirrors"] == "drawn" and r.get("identical_to_robosuite") is False]
    doc = {
        "benchmark": "render_contention",
        "machine": machine(),
        "command": command_line("bench/render_contention.py", argv),
        "settings": {k: v for k, v in vars(args).items() if k not in ("out", "update_results")},
        "gpu_load": None if load is None else load.describe,
        "gpu_rate_unit": None if load is None else load.unit,
        "summary": summarize(rows, args.rounds),
        "runs": rows,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(doc["summary"], indent=1))
    print(f"results: {out}")
    if refused:
        print(f"these layouts rendered other pixels than robosuite: {', '.join(sorted(set(refused)))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
