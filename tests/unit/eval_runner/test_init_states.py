"""LIBERO's initial states read without torch: the same arrays as torch.load, and nothing else runs."""

from __future__ import annotations

import io
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from eval_runner.init_states import load_init_states
from rlinf_bench.errors import SimulatorError
from rlinf_bench.suites import SUITES, get_suite


def _libero_files() -> list[Path]:
    names = [n for n, s in SUITES.items() if s.simulator == "libero"]
    return [task.init_states_file for name in names for task in get_suite(name).tasks()]


def test_given_every_installed_libero_file_then_the_arrays_equal_torch_loads_bit_for_bit() -> None:
    files = _libero_files()
    assert len(files) == 130  # four suites of 10 and LIBERO-90
    for path in files:
        ours = load_init_states(path)
        theirs = torch.load(path, weights_only=False)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, path.name
        assert ours.tobytes() == theirs.tobytes(), path.name


def test_given_a_libero_file_when_loaded_then_torch_is_never_imported() -> None:
    path = get_suite("libero_spatial").task(0).init_states_file
    code = (
        "import sys; from pathlib import Path; from eval_runner.init_states import load_init_states; "
        f"states = load_init_states(Path({str(path)!r})); print(states.shape, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[-1] == "False"
    assert out.startswith("(50, ")


def test_given_states_saved_as_a_tensor_then_they_load_through_torch(tmp_path: Path) -> None:
    states = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    torch.save(states, tmp_path / "t.pruned_init")
    loaded = load_init_states(tmp_path / "t.pruned_init")
    assert isinstance(loaded, np.ndarray)
    np.testing.assert_array_equal(loaded, states.numpy())


class _RunsCode:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        import os

        return (os.system, (f"touch {self.marker}",))


def test_given_a_file_whose_pickle_would_run_code_then_it_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pruned_init"
    with zipfile.ZipFile(path, "w") as archive:  # laid out as torch.save lays out LIBERO's files
        archive.writestr("archive/data.pkl", pickle.dumps(_RunsCode(marker), protocol=2))
        archive.writestr("archive/version", "3\n")
    with pytest.raises(SimulatorError, match=r"cannot read LIBERO initial states from .*evil\.pruned_init"):
        load_init_states(path)
    assert not marker.exists()


def test_given_a_missing_or_damaged_file_then_the_error_names_it_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(SimulatorError, match=r"missing\.pruned_init is missing; reinstall rlinf-libero"):
        load_init_states(tmp_path / "missing.pruned_init")
    damaged = tmp_path / "damaged.pruned_init"
    damaged.write_bytes(io.BytesIO(b"not a torch file").getvalue())
    with pytest.raises(SimulatorError, match=r"damaged\.pruned_init.*reinstall rlinf-libero"):
        load_init_states(damaged)


def test_given_liberoplus_layout_files_holding_one_flat_state_then_each_is_one_state() -> None:
    from rlinf_bench.published_suites import variants

    layout = [v for v in variants("liberoplus_goal") if v.category == "layout"][:3]
    suite = get_suite("liberoplus_goal")
    for variant in layout:
        path = suite.task(variant.task_id).init_states_file
        raw = torch.load(path, weights_only=False)
        states = load_init_states(path)
        assert raw.ndim == 1 and states.shape == (1, raw.shape[0])
        assert np.array_equal(states[0], np.asarray(raw))
