"""The device bundle (bench/gpu_bundle.py) and where bench/eval_gpu.py writes its figures."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from bench import eval_gpu, gpu_bundle


def _png(path: Path, mode: str) -> Path:
    rng = np.random.default_rng(0)
    if mode == "RGB":
        # smooth with noise, like a scanned texture: large enough to be converted (> 64 KiB)
        x = np.linspace(0, 255, 256)
        pixels = (x[None, :, None] + x[:, None, None] * 0.5 + rng.integers(0, 40, (256, 256, 3))) % 256
        image = Image.fromarray(pixels.astype(np.uint8), "RGB")
    else:
        image = Image.fromarray(rng.integers(0, 16, (256, 256)).astype(np.uint8), "L").convert("P")
    image.save(path)
    return path


def test_given_a_suite_then_only_its_bddl_and_init_files_are_packed() -> None:
    assert gpu_bundle.keep("libero/libero/init_files/libero_10/KITCHEN_SCENE3.pruned_init", "libero_10")
    assert not gpu_bundle.keep("libero/libero/init_files/libero_90/KITCHEN_SCENE3.pruned_init", "libero_10")
    assert not gpu_bundle.keep("libero/libero/bddl_files/libero_goal/open_the_drawer.bddl", "libero_10")
    assert gpu_bundle.keep("libero/libero/envs/base_object.py", "libero_10")
    assert not gpu_bundle.keep("robosuite/demos/demo_random_action.py", "libero_10")


def test_given_an_rgb_texture_then_it_travels_as_webp_and_decodes_to_the_same_pixels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gpu_bundle, "WEBP_CACHE", tmp_path / "cache")
    png = _png(tmp_path / "texture.png", "RGB")
    with tarfile.open(tmp_path / "t.tar", "w") as tar:
        gpu_bundle._add(tar, png, "assets/texture.png")
    with tarfile.open(tmp_path / "t.tar") as tar:
        (member,) = tar.getmembers()
        data = tar.extractfile(member).read()  # type: ignore[union-attr]
    assert member.name == "assets/texture.png.webp" and len(data) < png.stat().st_size
    with Image.open(io.BytesIO(data)) as back, Image.open(png) as original:
        assert back.mode == original.mode and back.tobytes() == original.tobytes()
    assert list((tmp_path / "cache").glob("*.webp"))  # the next bundle reuses it


def test_given_a_palette_texture_then_it_is_packed_as_the_png_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gpu_bundle, "WEBP_CACHE", tmp_path / "cache")
    png = _png(tmp_path / "palette.png", "P")
    assert gpu_bundle.lossless_webp(png) is None  # WebP would come back as RGB
    with tarfile.open(tmp_path / "t.tar", "w") as tar:
        gpu_bundle._add(tar, png, "assets/palette.png")
    with tarfile.open(tmp_path / "t.tar") as tar:
        assert tar.getnames() == ["assets/palette.png"]


def test_given_an_out_inside_bench_results_then_eval_gpu_refuses_unless_asked(tmp_path: Path) -> None:
    tracked = Path(eval_gpu.ROOT) / "bench" / "results" / "eval_gpu_h200.json"
    with pytest.raises(SystemExit, match="--update-results"):
        eval_gpu.results_path(tracked, update_results=False)
    assert eval_gpu.results_path(tracked, update_results=True) == tracked
    assert eval_gpu.results_path(tmp_path / "a.json", update_results=False) == tmp_path / "a.json"


def test_given_no_out_then_eval_gpu_writes_under_the_device_out_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OUT", str(tmp_path))
    assert eval_gpu.results_path(None, update_results=False) == tmp_path / "eval_gpu.json"
    monkeypatch.delenv("OUT")
    assert not eval_gpu.results_path(None, update_results=False).is_relative_to(Path(eval_gpu.ROOT) / "bench")


def test_given_more_than_a_part_holds_then_the_files_spread_over_parts_that_together_hold_each_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gpu_bundle.Parts, "HELD_BACK", 0)
    rng = np.random.default_rng(1)
    sources = []
    for i in range(6):  # incompressible: 6 x 200 KiB over parts of 300 KiB
        path = tmp_path / f"mesh{i}.msh"
        path.write_bytes(rng.bytes(200 * 1024))
        sources.append(path)
    (tmp_path / "out").mkdir()
    parts = gpu_bundle.Parts(tmp_path / "out", 300 * 1024)
    for path in sources:
        parts.add(path, f"assets/{path.name}")
    parts.close()

    assert len(parts.names) >= 3 and parts.names[0] == "site-1.tar.xz"
    seen: list[str] = []
    for name in parts.names:
        with tarfile.open(tmp_path / "out" / name) as tar:
            seen += tar.getnames()
    assert sorted(seen) == sorted(f"assets/{p.name}" for p in sources)
