"""Shared test fixtures."""

from __future__ import annotations

import os

# Rendering on a CPU box: Mesa EGL. Set before any simulator module is imported.
os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
