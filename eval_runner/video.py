"""Episode videos: MP4 when an ffmpeg backend is installed, otherwise an animated GIF (pillow)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from rlinf_bench.errors import ConfigError

FPS = 20  # LIBERO's control frequency: videos play in real time


def video_suffix() -> str:
    """``.mp4`` when imageio-ffmpeg is installed, else ``.gif``."""
    return ".mp4" if importlib.util.find_spec("imageio_ffmpeg") is not None else ".gif"


def write_video(path: Path, frames: list[Any]) -> Path:
    """Write ``frames`` (HxWx3 uint8) to ``path`` with the available format's suffix; returns the file written."""
    import imageio.v2 as imageio

    if not frames:
        raise ConfigError(f"no frames to write to {path}: videos need a rendered camera")
    target = path.with_suffix(video_suffix())
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.suffix == ".mp4":
        imageio.mimwrite(target, frames, fps=FPS)
    else:
        imageio.mimwrite(target, frames, duration=1000 / FPS, loop=0)
    return target
