"""The observation and action conventions of the reference LIBERO evaluation scripts, implemented once.

A LIBERO checkpoint only scores what its paper says when it sees its inputs the way it saw them in
training. Each reference script prepares them slightly differently:

- ``oft`` (OpenVLA-OFT, ``experiments/robot/libero/run_libero_eval.py``): 256 px renders rotated 180°,
  JPEG round trip (quality 95, decoded with the fast DCT as TensorFlow does) and a Lanczos-3
  antialiased resize to 224; state = eef position (3) +
  axis-angle of the eef quaternion (3) + gripper qpos (2). Actions: gripper [0, 1] -> [-1, 1],
  binarized, sign inverted (``openvla`` gripper mapping).
- ``openpi`` (``examples/libero/main.py``): 256 px renders rotated 180°, ``resize_with_pad`` to 224
  (bilinear, zero padding), same 8-d state, the task language as ``prompt``. Actions as-is.
- ``rlinf`` (RLinf ``envs/libero/libero_env.py``, ``_extract_image_and_state``): 256 px renders rotated
  180°, not resized (the model's processor does that), same 8-d state. Its OpenVLA-OFT path maps the
  gripper like OFT (``envs/action_utils.py``, ``prepare_actions_for_libero``).

Policies (``rlinf:``, ``openpi:``, ``python:``) name a convention instead of re-implementing it::

    conv = get_convention("openpi")
    obs_spec = conv.obs_spec()                 # cameras + 256 px + the proprio keys the state needs
    inputs = conv.inputs(batch)                # PolicyInputs: main/wrist images, [B, 8] states, prompts
    env_actions = conv.to_env_actions(actions) # the convention's gripper mapping, [B, 7]

Every function works on batches (leading dimensions) as :meth:`Policy.act` receives them.
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from eval_runner.policies.base import ObservationSpec
from rlinf_bench.errors import PolicyError, UnknownPolicyError
from rlinf_bench.registry import unknown_name

__all__ = [
    "CONVENTIONS",
    "GRIPPER_MAPPINGS",
    "MAIN_CAMERA",
    "STATE_KEYS",
    "WRIST_CAMERA",
    "Convention",
    "PolicyInputs",
    "convention_names",
    "get_convention",
    "jpeg_lanczos_resize",
    "jpeg_round_trip",
    "lanczos3_resize",
    "libero_state",
    "map_gripper",
    "quat_to_axis_angle",
    "resize_with_pad",
    "rotate_180",
]

MAIN_CAMERA = "agentview"
WRIST_CAMERA = "robot0_eye_in_hand"
#: What the 8-d state is built from, in order (quaternion converted to axis-angle).
STATE_KEYS = ("robot0_eef_pos", "robot0_eef_quat", "robot0_gripper_qpos")
#: All three references render LIBERO at 256 px (OFT ``env_img_res``, openpi ``LIBERO_ENV_RESOLUTION``,
#: RLinf ``init_params.camera_heights``).
REFERENCE_RENDER_RESOLUTION = 256


# -- image and state transforms ---------------------------------------------------------------------
def rotate_180(images: np.ndarray) -> np.ndarray:
    """Rotate ``[..., H, W, C]`` images by 180°: LIBERO renders upside down and every reference flips."""
    arr = np.asarray(images)
    return np.ascontiguousarray(arr[..., ::-1, ::-1, :])


def _per_image(images: np.ndarray, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    arr = np.asarray(images)
    if arr.ndim < 3 or arr.shape[-1] != 3:
        raise PolicyError(f"expected RGB images [..., H, W, 3], got shape {arr.shape}")
    flat = arr.reshape(-1, *arr.shape[-3:])
    out = np.stack([fn(img) for img in flat]) if len(flat) else np.zeros((0, 1, 1, 3), np.uint8)
    return out.reshape(*arr.shape[:-3], *out.shape[-3:])


def resize_with_pad(images: np.ndarray, height: int, width: int) -> np.ndarray:
    """openpi's ``image_tools.resize_with_pad``: keep the aspect ratio (bilinear), centre on zeros.

    Images already at the target size are returned unchanged, as openpi does.
    """
    from PIL import Image

    arr = np.asarray(images)
    if arr.shape[-3:-1] == (height, width):
        return arr

    def one(img: np.ndarray) -> np.ndarray:
        src = Image.fromarray(_to_uint8(img))
        ratio = max(src.width / width, src.height / height)
        new_h, new_w = int(src.height / ratio), int(src.width / ratio)
        canvas = Image.new(src.mode, (width, height), 0)
        canvas.paste(
            src.resize((new_w, new_h), resample=Image.Resampling.BILINEAR),
            (max(0, int((width - new_w) / 2)), max(0, int((height - new_h) / 2))),
        )
        return np.asarray(canvas)

    return _per_image(arr, one)


def jpeg_round_trip(images: np.ndarray, quality: int = 95) -> np.ndarray:
    """OFT's JPEG round trip: TensorFlow's ``encode_jpeg`` (quality 95, 4:2:0) then ``decode_image``.

    TensorFlow decodes with libjpeg's fast integer DCT, which differs from the accurate DCT most
    decoders use by up to 17 grey levels; Pillow encodes the same bytes' pixels as TF, and simplejpeg
    decodes with the fast DCT. Together they equal TensorFlow's output exactly (tested on a fixture).
    """
    from PIL import Image

    try:
        import simplejpeg
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise PolicyError(
            f"the oft convention needs simplejpeg ({exc}); run pip install 'rlinf-bench[libero]'"
        ) from exc

    def one(img: np.ndarray) -> np.ndarray:
        buf = io.BytesIO()
        Image.fromarray(_to_uint8(img)).save(buf, format="JPEG", quality=quality, subsampling=2)
        return np.asarray(simplejpeg.decode_jpeg(buf.getvalue(), colorspace="RGB", fastdct=True, fastupsample=False))

    return _per_image(images, one)


@functools.lru_cache(maxsize=16)
def _lanczos3_weights(n_in: int, n_out: int) -> np.ndarray:
    """``[n_out, n_in]`` resampling matrix of an antialiased Lanczos-3 resize with half-pixel centres.

    The definition TensorFlow's ``scale_and_translate`` uses: output pixel ``i`` samples the input at
    ``(i + 0.5) * scale``; when shrinking, the kernel is widened by ``scale`` (antialiasing); taps
    outside the image are dropped and the rest renormalised.
    """
    scale = n_in / n_out
    kernel_scale = max(scale, 1.0)
    support = 3.0 * kernel_scale
    weights = np.zeros((n_out, n_in))
    for i in range(n_out):
        centre = (i + 0.5) * scale
        taps = np.arange(max(int(np.floor(centre - support)), 0), min(int(np.ceil(centre + support)), n_in))
        x = (taps + 0.5 - centre) / kernel_scale
        w = np.sinc(x) * np.sinc(x / 3.0)
        w[np.abs(x) >= 3.0] = 0.0
        weights[i, taps] = w / w.sum()
    return weights


def lanczos3_resize(images: np.ndarray, size: int) -> np.ndarray:
    """``tf.image.resize(..., "lanczos3", antialias=True)`` to ``size`` x ``size``, rounded and clipped to uint8."""

    def one(img: np.ndarray) -> np.ndarray:
        rows = _lanczos3_weights(img.shape[0], size)
        cols = _lanczos3_weights(img.shape[1], size)
        out = np.einsum("ij,jkc->ikc", rows, img.astype(np.float64))
        out = np.einsum("ij,kjc->kic", cols, out)
        return np.clip(np.round(out), 0, 255).astype(np.uint8)

    return _per_image(images, one)


def jpeg_lanczos_resize(images: np.ndarray, size: int, quality: int = 95) -> np.ndarray:
    """OFT's ``resize_image_for_policy``: JPEG round trip (quality 95), then antialiased Lanczos-3 to ``size``.

    OFT does this with TensorFlow; this is the same computation without it: the JPEG stage equals
    TensorFlow's exactly and the resize is within one grey level (on 0.01 % of values) of
    ``tf.image.resize`` (``tests/unit/eval_runner/policies/test_conventions.py`` checks both against a
    fixture TensorFlow produced). The JPEG round trip is kept on purpose: OFT's training images went
    through it.
    """
    decoded = jpeg_round_trip(images, quality)
    if decoded.shape[-3:-1] == (size, size):
        return decoded
    return lanczos3_resize(decoded, size)


def _to_uint8(img: np.ndarray) -> np.ndarray:
    """Float images in [0, 1] become uint8 the way openpi's ``convert_to_uint8`` does (truncation)."""
    if np.issubdtype(img.dtype, np.floating):
        return (255 * img).astype(np.uint8)
    return np.asarray(img, dtype=np.uint8)


def quat_to_axis_angle(quat: np.ndarray) -> np.ndarray:
    """``[..., 4]`` (x, y, z, w) quaternions to ``[..., 3]`` axis-angle, as robosuite's ``quat2axisangle``.

    The references all copy robosuite's function: w is clipped to [-1, 1] and a (near) zero rotation
    gives exactly zero.
    """
    q = np.asarray(quat, dtype=np.float64)
    if q.shape[-1] != 4:
        raise PolicyError(f"robot0_eef_quat must have 4 values (x, y, z, w), got shape {q.shape}")
    flat = q.reshape(-1, 4)
    out = np.zeros((len(flat), 3), dtype=np.float64)
    for i, row in enumerate(flat):
        w = min(1.0, max(-1.0, float(row[3])))
        den = np.sqrt(1.0 - w * w)
        if not math.isclose(den, 0.0):
            out[i] = (row[:3] * 2.0 * math.acos(w)) / den
    return out.reshape(*q.shape[:-1], 3)


def libero_state(obs: dict[str, Any]) -> np.ndarray:
    """The references' 8-d state ``[..., 8]``: eef position, axis-angle of the eef quaternion, gripper qpos."""
    missing = [k for k in STATE_KEYS if k not in obs]
    if missing:
        raise PolicyError(
            f"observation lacks {missing} needed for the 8-d LIBERO state; declare them in the policy's "
            f"ObservationSpec.proprio (Convention.obs_spec() does)"
        )
    pos = np.asarray(obs["robot0_eef_pos"], dtype=np.float64)
    grip = np.asarray(obs["robot0_gripper_qpos"], dtype=np.float64)
    return np.concatenate([pos, quat_to_axis_angle(obs["robot0_eef_quat"]), grip], axis=-1)


# -- gripper mappings -------------------------------------------------------------------------------
def _gripper_identity(actions: np.ndarray) -> np.ndarray:
    return actions


def _gripper_openvla(actions: np.ndarray) -> np.ndarray:
    # OpenVLA's data loader stores the gripper as 0 = close, 1 = open; LIBERO wants -1 = open, +1 = close.
    actions[..., -1] = -np.sign(2.0 * actions[..., -1] - 1.0)
    return actions


def _gripper_binarize(actions: np.ndarray) -> np.ndarray:
    actions[..., -1] = np.sign(2.0 * actions[..., -1] - 1.0)
    return actions


#: name -> function of a float64 copy of the actions; see :func:`map_gripper`.
GRIPPER_MAPPINGS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "none": _gripper_identity,  # the policy already speaks LIBERO's [-1 open, +1 close] (openpi's pi0/pi0.5)
    "openvla": _gripper_openvla,  # [0, 1] -> [-1, 1], binarized, inverted (OFT; RLinf for OpenVLA/OFT/GR00T)
    "binarize": _gripper_binarize,  # [0, 1] -> [-1, 1], binarized, not inverted (OFT for non-OpenVLA families)
}


def map_gripper(actions: Any, mapping: str) -> np.ndarray:
    """Apply gripper mapping ``mapping`` to ``[..., 7]`` actions; returns a new float64 array."""
    fn = GRIPPER_MAPPINGS.get(mapping)
    if fn is None:
        raise unknown_name("gripper mapping", mapping, sorted(GRIPPER_MAPPINGS), error=UnknownPolicyError)
    arr = np.array(actions, dtype=np.float64, copy=True)
    if arr.ndim == 0 or arr.shape[-1] != 7:
        raise PolicyError(f"gripper mapping {mapping!r} needs [..., 7] actions, got shape {arr.shape}")
    return fn(arr)


# -- conventions ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PolicyInputs:
    """What a reference script hands its model for a batch (names follow RLinf's ``env_obs``)."""

    main_images: np.ndarray  # [B, H, W, 3] uint8, upright
    wrist_images: np.ndarray | None  # [B, H, W, 3] uint8, upright; None when the policy uses no wrist camera
    states: np.ndarray  # [B, 8] float64
    prompts: list[str]


@dataclass(frozen=True)
class Convention:
    """One reference script's preprocessing: images, state, prompt and gripper mapping."""

    name: str
    description: str
    reference: str  # file and function it follows
    resize: Literal["none", "pad-bilinear", "jpeg-lanczos"]
    image_size: int | None  # side of the images handed to the model; None: as rendered
    gripper: str  # default gripper mapping (a key of GRIPPER_MAPPINGS)
    render_resolution: int = REFERENCE_RENDER_RESOLUTION

    def obs_spec(self, *, wrist: bool = True, resolution: int | None = None) -> ObservationSpec:
        """The ObservationSpec this convention needs: both cameras at 256 px (by default) and the state keys."""
        cameras = (MAIN_CAMERA, WRIST_CAMERA) if wrist else (MAIN_CAMERA,)
        return ObservationSpec(
            cameras=cameras, resolution=resolution or self.render_resolution, proprio=tuple(STATE_KEYS)
        )

    def image(self, images: np.ndarray) -> np.ndarray:
        """Rendered ``[..., H, W, 3]`` camera images as this reference hands them to its model."""
        up = rotate_180(images)
        if self.image_size is None or self.resize == "none":
            return up
        if self.resize == "pad-bilinear":
            return resize_with_pad(up, self.image_size, self.image_size)
        return jpeg_lanczos_resize(up, self.image_size)

    def inputs(self, batch: dict[str, Any]) -> PolicyInputs:
        """Turn a :meth:`Policy.act` batch (or one unbatched observation) into the model's inputs."""
        key = f"{MAIN_CAMERA}_image"
        if key not in batch:
            raise PolicyError(
                f"convention {self.name!r} needs the {MAIN_CAMERA} camera; use Convention.obs_spec() as the "
                "policy's ObservationSpec"
            )
        wrist_key = f"{WRIST_CAMERA}_image"
        prompts = batch.get("task_description", [])
        return PolicyInputs(
            main_images=self.image(batch[key]),
            wrist_images=self.image(batch[wrist_key]) if wrist_key in batch else None,
            states=libero_state(batch),
            prompts=[prompts] if isinstance(prompts, str) else list(prompts),
        )

    def to_env_actions(self, actions: Any, gripper: str | None = None) -> np.ndarray:
        """The model's ``[..., 7]`` actions with the gripper mapped for LIBERO (the convention's mapping by default)."""
        return map_gripper(actions, gripper or self.gripper)

    def describe(self) -> dict[str, Any]:
        """What to record in a RunResult's provenance."""
        return {
            "convention": self.name,
            "render_resolution": self.render_resolution,
            "resize": self.resize,
            "image_size": self.image_size,
            "gripper": self.gripper,
            "reference": self.reference,
        }


CONVENTIONS: dict[str, Convention] = {
    c.name: c
    for c in (
        Convention(
            name="oft",
            description="OpenVLA-OFT: flip 180, JPEG q95 + Lanczos-3 to 224, 8-d state, OpenVLA gripper",
            reference="openvla-oft experiments/robot/libero/run_libero_eval.py prepare_observation/process_action",
            resize="jpeg-lanczos",
            image_size=224,
            gripper="openvla",
        ),
        Convention(
            name="openpi",
            description="openpi LIBERO client: flip 180, resize_with_pad to 224, 8-d state, actions as-is",
            reference="openpi examples/libero/main.py eval_libero",
            resize="pad-bilinear",
            image_size=224,
            gripper="none",
        ),
        Convention(
            name="rlinf",
            description="RLinf LiberoEnv: flip 180, 256 px as rendered, 8-d state, OpenVLA gripper",
            reference="RLinf rlinf/envs/libero/libero_env.py _extract_image_and_state; envs/action_utils.py",
            resize="none",
            image_size=None,
            gripper="openvla",
        ),
    )
}


def convention_names() -> list[str]:
    """Every registered convention name."""
    return sorted(CONVENTIONS)


def get_convention(name: str) -> Convention:
    """The convention called ``name`` (oft, openpi, rlinf); an unknown name lists the valid ones."""
    try:
        return CONVENTIONS[name]
    except KeyError:
        raise unknown_name("observation convention", name, convention_names(), error=UnknownPolicyError) from None
