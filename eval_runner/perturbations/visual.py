"""The visual axes: camera, light and texture, as edits of one episode's MuJoCo model.

They change what the cameras see and nothing the physics reads: camera poses and fields of view, light
colours and directions, texture pixels. They are applied right after the episode's reset, before its
initial state is loaded and its first image rendered. LIBERO's reset builds a new model from its XML, so
an edit lasts exactly one episode (and a render context that holds edited textures is not handed on to
the next one: :func:`eval_runner.render_context.same_render_assets` sees they differ).
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["TEXTURE_SURFACES", "move_cameras", "relight", "retexture", "surface_textures", "texture_library"]

#: The surfaces the texture axis retextures, in the order its levels add them.
TEXTURE_SURFACES = ("walls", "floor", "table")


def _quat_from_axis_angle(axis: np.ndarray, angle: float) -> np.ndarray:
    half = angle / 2
    return np.concatenate([[math.cos(half)], math.sin(half) * axis / np.linalg.norm(axis)])


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def _rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    conj = q * np.array([1.0, -1.0, -1.0, -1.0])
    return _quat_mul(_quat_mul(q, np.concatenate([[0.0], v])), conj)[1:]


def _perpendicular_axis(direction: np.ndarray, angle: float) -> np.ndarray:
    """The unit vector at ``angle`` in the plane perpendicular to ``direction``."""
    d = direction / np.linalg.norm(direction)
    helper = np.array([0.0, 0.0, 1.0]) if abs(d[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    u = np.cross(d, helper)
    u /= np.linalg.norm(u)
    v = np.cross(d, u)
    return math.cos(angle) * u + math.sin(angle) * v


def move_cameras(
    model: Any, names: list[str], pivot_z: float, rng: np.random.Generator, degrees: float
) -> dict[str, Any]:
    """Turn each world-fixed camera of ``names`` by ``degrees`` about the point it looks at (its optical axis
    meets the plane ``z = pivot_z``, where the objects stand), in a drawn direction, and widen or narrow its
    field of view by ``degrees / 2``. The scene stays in view; position and orientation change together.
    Cameras mounted on a moving body (the wrist camera) keep their pose: they move with the arm anyway."""
    direction = float(rng.uniform(0.0, 2 * math.pi))
    fov_sign = 1.0 if rng.random() < 0.5 else -1.0
    moved: list[str] = []
    for name in names:
        cam = model.camera(name).id
        if model.cam_bodyid[cam] != 0:
            continue
        pos, quat = model.cam_pos[cam].copy(), model.cam_quat[cam].copy()
        forward = _rotate(quat, np.array([0.0, 0.0, -1.0]))  # a MuJoCo camera looks along its -z
        reach = (pivot_z - pos[2]) / forward[2] if forward[2] < -0.1 else 1.0
        pivot = pos + max(reach, 0.1) * forward
        turn = _quat_from_axis_angle(_perpendicular_axis(pos - pivot, direction), math.radians(degrees))
        model.cam_pos[cam] = pivot + _rotate(turn, pos - pivot)
        model.cam_quat[cam] = _quat_mul(turn, quat)
        model.cam_fovy[cam] = model.cam_fovy[cam] + fov_sign * degrees / 2
        moved.append(name)
    return {
        "cameras": ",".join(moved),
        "direction_deg": round(math.degrees(direction), 3),
        "fovy_change_deg": fov_sign * degrees / 2,
    }


def relight(model: Any, rng: np.random.Generator, stops: float) -> dict[str, Any]:
    """Make every light (and the headlight) brighter or darker by ``stops`` (a factor 2 per stop, the sign
    drawn), and tilt each light's direction by ``10 deg`` per stop about a drawn horizontal axis."""
    sign = 1.0 if rng.random() < 0.5 else -1.0
    factor = 2.0 ** (sign * stops)
    tilt = math.radians(10.0 * stops)
    heading = float(rng.uniform(0.0, 2 * math.pi))
    axis = np.array([math.cos(heading), math.sin(heading), 0.0])
    turn = _quat_from_axis_angle(axis, tilt)
    for light in range(model.nlight):
        model.light_diffuse[light] = model.light_diffuse[light] * factor
        model.light_specular[light] = model.light_specular[light] * factor
        model.light_dir[light] = _rotate(turn, model.light_dir[light])
    head = model.vis.headlight
    head.diffuse = np.asarray(head.diffuse) * factor
    head.ambient = np.asarray(head.ambient) * factor
    return {
        "factor": round(factor, 6),
        "tilt_deg": round(10.0 * stops, 6),
        "tilt_heading_deg": round(math.degrees(heading), 3),
    }


@cache
def texture_library(folder: str) -> tuple[Path, ...]:
    """The texture images the installed LIBERO assets hold (``assets/textures/*.png``), sorted."""
    return tuple(sorted(Path(folder).glob("*.png")))


def surface_textures(model: Any) -> dict[str, list[int]]:
    """Surface -> the ids of the textures it shows: walls and floor by their materials (every LIBERO scene has
    ``walls_mat`` and ``floorplane``), the table by the visual geoms of its body (``table``,
    ``living_room_table``, ``study_table``…; none in LIBERO-Object's floor scenes)."""
    found: dict[str, set[int]] = {s: set() for s in TEXTURE_SURFACES}
    for mat in range(model.nmat):
        name = model.material(mat).name
        tex = int(model.mat_texid[mat][1])  # mjTEXROLE_RGB
        if tex < 0:
            continue
        if name == "walls_mat":
            found["walls"].add(tex)
        elif name == "floorplane":
            found["floor"].add(tex)
    for geom in range(model.ngeom):
        body = model.body(model.geom_bodyid[geom]).name
        mat = int(model.geom_matid[geom])
        if mat < 0 or model.geom_contype[geom] or "table" not in body or "leg" in model.material(mat).name:
            continue
        tex = int(model.mat_texid[mat][1])
        if tex >= 0:
            found["table"].add(tex)
    return {s: sorted(ids) for s, ids in found.items()}


def retexture(
    model: Any, context: Any, library: tuple[Path, ...], rng: np.random.Generator, surfaces: int
) -> dict[str, Any]:
    """Give the first ``surfaces`` of :data:`TEXTURE_SURFACES` a texture drawn from ``library``, written into
    the model's texture pixels (resized to each texture's size) and uploaded to the render ``context``
    (robosuite's; None when nothing renders)."""
    from PIL import Image

    params: dict[str, Any] = {}
    textures = surface_textures(model)
    for surface in TEXTURE_SURFACES[:surfaces]:
        image_path = library[int(rng.integers(len(library)))]
        params[surface] = image_path.stem if textures[surface] else "none in this scene"
        if not textures[surface]:
            continue
        with Image.open(image_path) as opened:
            image = opened.convert("RGB")
        for tex in textures[surface]:
            width, height, channels = (
                int(model.tex_width[tex]),
                int(model.tex_height[tex]),
                int(model.tex_nchannel[tex]),
            )
            side = min(width, height)  # a cube texture stacks square faces: fill each with the image
            face = np.asarray(image.resize((width, side), Image.Resampling.BILINEAR), dtype=np.uint8)
            pixels = np.tile(face, (height // side, 1, 1))
            if channels == 4:
                pixels = np.concatenate([pixels, np.full((*pixels.shape[:2], 1), 255, np.uint8)], axis=2)
            start = int(model.tex_adr[tex])
            model.tex_data[start : start + width * height * channels] = pixels.reshape(-1)
            if context is not None:
                _upload(model, context, tex)
    return params


def _upload(model: Any, context: Any, tex: int) -> None:
    import mujoco

    context.gl_ctx.make_current()
    mujoco.mjr_uploadTexture(model, context.con, tex)
