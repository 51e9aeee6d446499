"""Shared test fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

# Rendering on a CPU box: Mesa EGL. Set before any simulator module is imported.
os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("PYOPENGL_PLATFORM", "egl")

#: Variables the code under test sets for the rest of its process (eval_runner.libero_setup points LIBERO at
#: a test's folder): restored after each test, so a later test's subprocess does not inherit a deleted folder.
PROCESS_SETTINGS = ("LIBERO_CONFIG_PATH",)


@pytest.fixture(autouse=True)
def _restore_process_settings() -> Iterator[None]:
    before = {name: os.environ.get(name) for name in PROCESS_SETTINGS}
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
