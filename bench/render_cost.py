"""What one camera render of a LIBERO scene draws, and what MuJoCo's mirror pass adds to it.

On one H200 the suite's renders take ~1.6 ms of GPU time per 256 px camera render and hold SM activity near
69 % (``bench/render_contention.py``). Whether a render could cost less while drawing the same pixels depends
on what it draws. For each suite's scene this bench reports, per camera:

- the geoms MuJoCo draws and their mesh triangles;
- the triangles of geoms whose bounding sphere reaches into the camera's view: culling the rest (the most any
  culling could save and keep every pixel) would drop the difference;
- the geoms MuJoCo draws the whole scene again for, mirrored (reflective planes and boxes,
  ``bench/scene_render.py``), and so how many times each render draws the scene;
- the time per row (both cameras) with the mirror pass and without it, in turns, ``--rounds`` times, on this
  machine's GL (its renderer is recorded: Mesa's llvmpipe on a CPU box), and the pixels that dropping the
  pass changes.

Times from llvmpipe rank the parts of a render; they are not GPU times. What the mirror pass costs the GPU
is measured beside the policy with ``bench/render_contention.py --mirrors drawn,skipped``.

``python bench/render_cost.py --suites libero_spatial,libero_object,libero_goal,libero_10 --out $OUT/render_cost.json``
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_gpu_common import CAMERAS, command_line, machine, results_path  # noqa: E402
from bench.scene_render import (  # noqa: E402
    SceneFiles,
    SceneRenderer,
    build_renderers,
    export_scene,
    mirror_geoms,
    pixels_changed,
)


def sphere_in_view(centre: np.ndarray, radius: float, fovy_deg: float, aspect: float = 1.0) -> bool:
    """Whether a sphere (centre in the camera's frame: MuJoCo looks along -z, y up) reaches into the view.

    Conservative: only the four side planes and the camera's own plane are tested, so a sphere reported
    outside can draw no pixel, while one reported inside may still draw none."""
    x, y, z = (float(v) for v in centre)
    depth = -z
    if depth < -radius:
        return False
    tan_y = math.tan(math.radians(fovy_deg) / 2)
    for offset, tan in ((abs(x), tan_y * aspect), (abs(y), tan_y)):
        # signed distance to the side plane offset = tan * depth, positive outside
        if (offset - tan * depth) / math.sqrt(1 + tan * tan) > radius:
            return False
    return True


def mesh_triangles(model: Any, geom: Any) -> int:
    """Triangles of a drawn mesh geom (0 for MuJoCo's built-in shapes, which are small)."""
    import mujoco

    if geom.type != mujoco.mjtGeom.mjGEOM_MESH or geom.dataid < 0:
        return 0
    return int(model.mesh_facenum[geom.dataid // 2])  # dataid is 2 * mesh id, + 1 for the convex hull


def camera_geometry(renderer: SceneRenderer, camera_id: int) -> dict[str, Any]:
    """What ``camera_id``'s render draws: geoms, mesh triangles (all and in view), mirror geoms."""
    import mujoco

    renderer.update_scene(camera_id)
    model, data, scene = renderer.model, renderer.data, renderer.scene
    position, rotation = data.cam_xpos[camera_id], data.cam_xmat[camera_id].reshape(3, 3)
    fovy = float(model.cam_fovy[camera_id])
    drawn = in_view = 0
    for index in range(scene.ngeom):
        geom = scene.geoms[index]
        triangles = mesh_triangles(model, geom)
        drawn += triangles
        radius = geom.modelrbound if geom.modelrbound > 0 else float(np.linalg.norm(geom.size))
        if sphere_in_view(rotation.T @ (np.asarray(geom.pos) - position), radius, fovy):
            in_view += triangles
    mirrors = [
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, scene.geoms[i].objid) or f"geom {scene.geoms[i].objid}"
        for i in mirror_geoms(scene)
    ]
    return {
        "geoms": int(scene.ngeom),
        "mesh_triangles": drawn,
        "mesh_triangles_in_view": in_view,
        "in_view_share": round(in_view / drawn, 3) if drawn else None,
        "mirror_geoms": mirrors,
        "scene_passes": 1 + len(mirrors),
    }


def ms_per_row(renderer: SceneRenderer, rows: int) -> float:
    """Mean wall time of ``rows`` rows (both cameras rendered and read back), in ms."""
    start = time.perf_counter()
    for _ in range(rows):
        renderer.render(make_current=False)
    return 1000 * (time.perf_counter() - start) / rows


def gl_renderer() -> str:
    """The GL renderer of the current context (llvmpipe on a CPU box, the GPU's name on a GPU node)."""
    from OpenGL import GL

    name = GL.glGetString(GL.GL_RENDERER)
    return name.decode() if isinstance(name, bytes) else str(name)


def measure_scene(files: SceneFiles, rows: int, rounds: int) -> dict[str, Any]:
    """One scene: its geometry per camera, and its render time with and without the mirror pass, in turns."""
    drawn, skipped = build_renderers(files, 2, shared=True)
    skipped.draw_mirrors = False
    reference = np.load(files.reference)
    as_robosuite = drawn.render(make_current=False)
    without = skipped.render(make_current=False)
    times: dict[str, list[float]] = {"mirrors_drawn": [], "mirrors_skipped": []}
    for _ in range(rounds):
        times["mirrors_drawn"].append(round(ms_per_row(drawn, rows), 1))
        times["mirrors_skipped"].append(round(ms_per_row(skipped, rows), 1))
    result = {
        "gl_renderer": gl_renderer(),
        "identical_to_robosuite": all(
            np.array_equal(image, reference[camera]) for camera, image in zip(CAMERAS, as_robosuite, strict=True)
        ),
        "cameras": {camera: camera_geometry(drawn, cid) for camera, cid in zip(CAMERAS, drawn.camera_ids, strict=True)},
        "ms_per_row": times,
        "skipped_over_drawn": round(
            statistics.mean(times["mirrors_skipped"]) / statistics.mean(times["mirrors_drawn"]), 3
        ),
        "pixels_changed_without_mirrors": {
            camera: pixels_changed(a, b) for camera, a, b in zip(CAMERAS, as_robosuite, without, strict=True)
        },
        "pixels_per_image": files.resolution**2,
    }
    drawn.context.free()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suites", default="libero_spatial", help="comma-separated LIBERO suites")
    parser.add_argument("--task", type=int, default=0, help="the task whose scene is built in each suite")
    parser.add_argument("--resolution", type=int, default=256, help="camera side in pixels")
    parser.add_argument("--rows", type=int, default=5, help="rows timed per variant and round")
    parser.add_argument("--rounds", type=int, default=2, help="both variants, in turns, this many times")
    parser.add_argument("--out", type=Path, help="result file (default: $OUT or a temporary file)")
    parser.add_argument("--update-results", action="store_true", help="allow an --out inside bench/results/")
    args = parser.parse_args(argv)
    from rlinf_bench.errors import RlinfBenchError
    from rlinf_bench.suites import get_suite

    suites = [name.strip() for name in args.suites.split(",") if name.strip()]
    for name in suites:
        try:
            get_suite(name)
        except RlinfBenchError as exc:
            parser.error(f"--suites: {exc}")
        if not name.startswith("libero_"):
            parser.error(
                f"--suites: {name} is not a LIBERO suite; this bench builds LIBERO scenes (libero_spatial, ...)"
            )
    out = results_path(args.out, update_results=args.update_results, name="render_cost.json")
    scenes: dict[str, Any] = {}
    for name in suites:
        with tempfile.TemporaryDirectory(prefix="render-cost-") as folder:
            files = export_scene(name, args.task, args.resolution, Path(folder))
            scenes[name] = measure_scene(files, args.rows, args.rounds)
        print(json.dumps({name: scenes[name]}), flush=True)
    doc = {
        "benchmark": "render_cost",
        "machine": machine(),
        "command": command_line("bench/render_cost.py", argv),
        "settings": {k: v for k, v in vars(args).items() if k not in ("out", "update_results")},
        "scenes": scenes,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"results: {out}")
    if not all(scene["identical_to_robosuite"] for scene in scenes.values()):
        print("a scene rendered other pixels than robosuite with its mirrors drawn", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
