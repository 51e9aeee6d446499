"""Episode videos: H.264 MP4 through imageio-ffmpeg (its wheel ships a static ffmpeg: no system install).

H.264 in yuv420p is what every browser's <video> tag and the MLflow UI play. Frames are written at the
resolution they were rendered at, the policy's camera resolution (see eval_runner.episode_settings).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlinf_bench.errors import ConfigError

FPS = 20  # LIBERO's control frequency: videos play in real time
SUFFIX = ".mp4"


def video_suffix() -> str:
    """The suffix of every episode video."""
    return SUFFIX


def write_video(path: Path, frames: list[Any]) -> Path:
    """Write ``frames`` (HxWx3 uint8) to ``path`` as an H.264 MP4 (suffix ``.mp4``); returns the file written."""
    try:
        import imageio.v2 as imageio
        import imageio_ffmpeg  # noqa: F401  (imageio's ffmpeg plugin needs it; say so here, not mid-write)
    except ImportError as exc:
        raise ConfigError(
            f"cannot write the video {path}: {exc}; install the simulator extra (pip install 'rlinf-bench[libero]', "
            "which brings imageio-ffmpeg) or record none (videos: 0)"
        ) from exc
    if not frames:
        raise ConfigError(f"no frames to write to {path}: videos need a rendered camera")
    target = path.with_suffix(SUFFIX)
    target.parent.mkdir(parents=True, exist_ok=True)
    # macro_block_size=2: H.264 in yuv420p needs even sides; any even camera resolution is kept as rendered
    # (imageio's default of 16 would rescale e.g. 200 px frames to 208 px).
    imageio.mimwrite(
        target,
        frames,
        format="FFMPEG",
        fps=FPS,
        codec="libx264",
        pixelformat="yuv420p",
        macro_block_size=2,
        output_params=["-movflags", "+faststart"],  # the index first: a browser starts playing before the end
    )
    return target
