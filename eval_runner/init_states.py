"""LIBERO's fixed initial states, read without importing torch.

Every ``.pruned_init`` file of LIBERO's four suites (and LIBERO-90) is a ``torch.save`` archive holding one
numpy array: a zip with ``archive/data.pkl``, whose pickle names only numpy's array reconstruction. Reading
it through ``torch.load`` cost each worker process the torch import (1.5-1.9 s of CPU and ~180 MiB of
memory on a 2-core box, ``bench/worker_start.py``), for a file that needs none of it. So the pickle is read
here with an unpickler that accepts numpy's arrays and nothing else. A file that holds anything else (a
LIBERO build that saved tensors) is handed to ``torch.load`` with ``weights_only=True``: tensors load, and
a pickle that would run other code is refused (before, every file went through ``weights_only=False``).
"""

from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from rlinf_bench.errors import SimulatorError

#: The globals a pickled numpy array refers to (numpy 1.x and 2.x spell the module differently).
_NUMPY_GLOBALS = frozenset(
    {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("_codecs", "encode"),
    }
)


class _NotPlainNumpy(Exception):
    """The pickle refers to something other than a numpy array (internal: fall back to torch)."""


class _NumpyOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _NUMPY_GLOBALS:
            raise _NotPlainNumpy(f"{module}.{name}")
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:  # a tensor's storage: only torch can read it
        raise _NotPlainNumpy(f"persistent id {pid!r}")


def load_init_states(path: Path) -> np.ndarray:
    """The ``[n_states, state_dim]`` array of initial states in a LIBERO ``.pruned_init`` file.

    A file holding one flat state (LIBERO-plus's objects-layout variants) is one state, as LIBERO-plus reads it.
    """
    states = _load_states(path)
    return states.reshape(1, -1) if states.ndim == 1 else states


def _load_states(path: Path) -> np.ndarray:
    try:
        with zipfile.ZipFile(path) as archive:
            pickles = [n for n in archive.namelist() if n.endswith("/data.pkl") or n == "data.pkl"]
            payload = archive.read(pickles[0]) if len(pickles) == 1 else None
    except FileNotFoundError as exc:
        raise SimulatorError(f"LIBERO initial states file {path} is missing; reinstall rlinf-libero") from exc
    except zipfile.BadZipFile:
        payload = None  # torch's legacy format
    if payload is not None:
        try:
            states = _NumpyOnlyUnpickler(io.BytesIO(payload)).load()
        except (_NotPlainNumpy, pickle.UnpicklingError, EOFError, ValueError):  # damaged: torch says how
            states = None
        if isinstance(states, np.ndarray):
            return states
    return _load_with_torch(path)


def _load_with_torch(path: Path) -> np.ndarray:
    import torch  # only for files that are not a plain numpy pickle

    try:
        states = torch.load(path, weights_only=True)
    except Exception as exc:  # torch raises UnpicklingError, RuntimeError or EOFError depending on the damage
        first_line = next(iter(str(exc).splitlines()), "")
        raise SimulatorError(
            f"cannot read LIBERO initial states from {path}: it is neither a numpy array nor tensors saved by "
            f"torch ({type(exc).__name__}: {first_line}); reinstall rlinf-libero, or regenerate the file with torch.save"
        ) from exc
    return states.numpy() if isinstance(states, torch.Tensor) else np.asarray(states)
