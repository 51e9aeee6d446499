"""Trim a Lambda build artifact that `sam build` made through the Makefile (stdlib only, any python3).

    python deploy/tools/slim_artifact.py DIR [--without-layer layers/shared/requirements.txt]

- drops the distributions that the shared layer already holds (``--without-layer``): a function gets only
  what the layer lacks, so there is one copy of pydantic, powertools and rlinf_bench per deployment;
- drops ``__pycache__`` folders (the build uses --no-compile; copied sources may carry a local cache),
  ``bin/`` (console scripts with this machine's shebang, useless in Lambda), the test suites that wheels
  ship inside their packages (``<package>/**/tests``: numpy's and matplotlib's alone are 12 MB), and the
  kubernetes client's asyncio twin ``kubernetes/aio`` (41 MB; the synchronous client never imports it),
  and files Python never loads: C/Cython sources and headers, type stubs (fontTools and numpy: 9 MB);
- prints the artifact's size, which docs/performance.md records.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

NEVER_LOADED = (".c", ".h", ".pyx", ".pxd", ".pyi")


def normalize(name: str) -> str:
    """PEP 503 name: lowercase, runs of -_. become one dash."""
    return re.sub(r"[-_.]+", "-", name).lower()


def layer_distributions(requirements: Path) -> set[str]:
    """Distribution names pinned in a requirements file (comments and blank lines ignored)."""
    names = set()
    for line in requirements.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(normalize(re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0]))
    return names


def remove_distribution(root: Path, dist_info: Path) -> None:
    """Delete every file that the distribution's RECORD lists, then its now-empty folders."""
    record = dist_info / "RECORD"
    folders: set[Path] = set()
    if record.exists():
        for row in record.read_text().splitlines():
            rel = row.split(",", 1)[0]
            path = (root / rel).resolve()
            if root.resolve() not in path.parents:
                continue  # a RECORD path outside the artifact (../../bin/x): not ours to touch
            folders.update(p for p in path.parents if root.resolve() in p.parents)
            if path.is_file():
                path.unlink()
    shutil.rmtree(dist_info, ignore_errors=True)
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        pycache = folder / "__pycache__"
        if pycache.is_dir():
            shutil.rmtree(pycache)
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def size_mb(root: Path) -> float:
    """Unzipped size in MB (10^6 bytes, as Lambda counts its 250 MB limit)."""
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6


def main(argv: list[str] | None = None) -> int:
    """Trim DIR in place; exit 2 with a message when DIR or the requirements file is missing."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("artifact", type=Path, help="the folder sam build filled (ARTIFACTS_DIR, or its python/)")
    p.add_argument("--without-layer", type=Path, metavar="REQUIREMENTS", help="drop the distributions listed here")
    args = p.parse_args(argv)
    root: Path = args.artifact
    if not root.is_dir():
        print(f"slim_artifact: {root} is not a folder; pass the build's ARTIFACTS_DIR", file=sys.stderr)
        return 2
    dropped = []
    if args.without_layer:
        if not args.without_layer.is_file():
            print(f"slim_artifact: no requirements file {args.without_layer}", file=sys.stderr)
            return 2
        shared = layer_distributions(args.without_layer)
        for dist_info in sorted(root.glob("*.dist-info")):
            name = normalize(dist_info.name[: -len(".dist-info")].rsplit("-", 1)[0])
            if name in shared:
                remove_distribution(root, dist_info)
                dropped.append(name)
    for cache in list(root.rglob("__pycache__")):
        shutil.rmtree(cache, ignore_errors=True)
    # Only inside a package (depth >= 2): a top-level "tests" folder would be a distribution of its own.
    for suite in [p for p in root.glob("*/**/tests") if p.is_dir()]:
        shutil.rmtree(suite, ignore_errors=True)
    for unused in ("bin", "kubernetes/aio"):
        shutil.rmtree(root / unused, ignore_errors=True)
    for source in [p for p in root.glob("*/**/*") if p.suffix in NEVER_LOADED and p.is_file()]:
        source.unlink()
    note = f" (left to the layer: {', '.join(dropped)})" if dropped else ""
    print(f"{root}: {size_mb(root):.1f} MB unzipped{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
