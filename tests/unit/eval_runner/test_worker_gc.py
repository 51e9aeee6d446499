"""A worker freezes its imports' objects out of the cyclic GC, and still collects what its scenes drop."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHILD = """
import gc, sys, weakref
from pathlib import Path
from eval_runner.libero_setup import configure_libero
configure_libero(Path(sys.argv[1]), needs_renderer=False)
from eval_runner.envs.libero_scene import freeze_imports
freeze_imports()
frozen = gc.get_freeze_count()

class Scene:  # a scene's objects refer to each other, as robosuite's sim, model and data do
    pass

a, b = Scene(), Scene()
a.other, b.other = b, a
dropped = weakref.ref(a)
del a, b
gc.collect()  # what robosuite's MjSim.free() runs at every reset
print(frozen, "libero.libero.envs.env_wrapper" in sys.modules, dropped() is None)
"""


def test_given_a_frozen_worker_then_the_simulator_is_imported_and_a_dropped_scene_cycle_is_still_freed(
    tmp_path: Path,
) -> None:
    cmd = [sys.executable, "-c", CHILD, str(tmp_path)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()
    frozen, imported, freed = int(out[-3]), out[-2], out[-1]
    assert frozen > 50_000  # robosuite, MuJoCo's bindings and numba's objects
    assert imported == "True"
    assert freed == "True"
