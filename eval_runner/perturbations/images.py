"""The noise axis: sensor noise and blur on every image the policy gets, drawn anew for each image.

Applied to the observation rows the scene hands the policy (``<camera>_image``), never to the simulator
or the episode's video: the physics is unchanged, and each image's noise comes from the episode's own
generator in the order the images are rendered.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["ImageNoise"]


def _gaussian_kernel(sigma: float) -> np.ndarray:
    radius = max(1, math.ceil(3 * sigma))
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    kernel = np.exp(-(x**2) / (2 * sigma**2))
    return kernel / kernel.sum()


def _blur(image: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Separable Gaussian blur of an H x W x C float image, edges repeated."""
    radius = len(kernel) // 2
    out = image
    for axis in (0, 1):
        pad = [(0, 0)] * out.ndim
        pad[axis] = (radius, radius)
        padded = np.pad(out, pad, mode="edge")
        windows = np.lib.stride_tricks.sliding_window_view(padded, len(kernel), axis=axis)
        out = windows @ kernel
    return out


class ImageNoise:
    """Blur (``blur_px``, Gaussian sigma in pixels) then additive Gaussian noise (``sigma``, 8-bit levels)."""

    def __init__(self, rng: np.random.Generator, sigma: float, blur_px: float) -> None:
        self.rng = rng
        self.sigma = sigma
        self.kernel = _gaussian_kernel(blur_px) if blur_px > 0 else None

    def __call__(self, obs: dict[str, Any]) -> dict[str, Any]:
        """``obs`` with every ``*_image`` blurred and noised (uint8, same shape); other keys as they are."""
        out = dict(obs)
        for key in sorted(k for k in obs if k.endswith("_image")):
            image = np.asarray(obs[key], dtype=np.float64)
            if self.kernel is not None:
                image = _blur(image, self.kernel)
            image = image + self.rng.normal(0.0, self.sigma, size=image.shape)
            out[key] = np.clip(np.rint(image), 0, 255).astype(np.uint8)
        return out
