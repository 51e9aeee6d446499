"""The one reader of files named by data: every trick a result file can play is refused with its reason."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from rlinf_aws.s3_objects import S3Objects
from rlinf_bench.document_store import Storage
from rlinf_bench.errors import NamedFileRefusedError
from rlinf_bench.named_files import NAME_MAX_CHARS, MediaType, RunFolder, media_type_of, read_named_file

MP4 = b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2avc1mp41" + b"\x00" * 64
GIF = b"GIF89a\x01\x00\x01\x00" + b"\x00" * 32
SECRET_MP4 = MP4 + b"SECRET-OUTSIDE"  # a real video's header: only where it lies keeps it out


@pytest.fixture
def run(tmp_path: Path) -> Iterator[tuple[Path, RunFolder]]:
    """A results root with one suite folder holding run0's videos, and a secret folder beside it."""
    root = tmp_path / "results" / "req" / "m1"
    videos = root / "libero_spatial" / "run0.videos"
    videos.mkdir(parents=True)
    (videos / "task00_init00.mp4").write_bytes(MP4)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "credentials").write_text("[default]\naws_secret_access_key = abc\n")
    (outside / "secret.mp4").write_bytes(SECRET_MP4)
    yield root, RunFolder.of(str(root / "libero_spatial"), str(root))


def refused(name: str, where: RunFolder, **kw: object) -> str:
    with pytest.raises(NamedFileRefusedError) as info:
        read_named_file(name, where, **kw)  # type: ignore[arg-type]
    return str(info.value)


def test_a_video_inside_the_runs_folder_is_read_with_its_type_from_the_content(run: tuple[Path, RunFolder]) -> None:
    root, where = run
    got = read_named_file(str(root / "libero_spatial/run0.videos/task00_init00.mp4"), where)
    assert got.data == MP4 and got.media_type is MediaType.MP4 and got.relative == "run0.videos/task00_init00.mp4"
    assert got.stem == "task00_init00"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("{root}/libero_spatial/../../../../outside/secret.mp4", "'..' segment"),
        ("{root}/libero_spatial/run0.videos/../../libero_goal/x.mp4", "'..' segment"),
        ("{root}/libero_spatial/./run0.videos/task00_init00.mp4", "'.' segment"),
        ("{root}/libero_spatial//run0.videos/task00_init00.mp4", "empty segment"),
        ("{tmp}/outside/secret.mp4", "outside the run's own folder"),
        ("{tmp}/outside/credentials", "outside the run's own folder"),
        ("/proc/self/environ", "outside the run's own folder"),
        ("/etc/passwd", "outside the run's own folder"),
        ("~/.aws/credentials", "outside the run's own folder"),
        ("{root}/libero_spatial_evil/run0.videos/x.mp4", "outside the run's own folder"),
        ("{root}/probes/gpu.json", "outside the run's own folder"),
        ("file://{root}/libero_spatial/run0.videos/task00_init00.mp4", "not a URL"),
        ("http://evil.example/track.gif", "not a URL"),
        ("s3://other-bucket/results/req/m1/libero_spatial/run0.videos/x.mp4", "an s3:// name is never read"),
        ("{root}/libero_spatial/run0.videos/..%2f..%2f..%2foutside%2fsecret.mp4", "characters other than"),
        ("{root}/libero_spatial/%2e%2e/outside/secret.mp4", "characters other than"),
        ("{root}/libero_spatial/run0.videos\\..\\..\\secret.mp4", "characters other than"),
        ("{root}/libero_spatial/\uff0e\uff0e\uff0f\uff0e\uff0e\uff0fsecret.mp4", "characters other than"),
        ("{root}/libero_spatial/run0.videos/\u2024\u2024/secret.mp4", "characters other than"),
        ("{root}/libero_spatial/run0.videos/task\u202e4pm.00_init00.mp4", "characters other than"),
        ("{root}/libero_spatial/run0.videos/task00\u200b_init00.mp4", "characters other than"),
        ("{root}/libero_spatial/run0.videos/task00_init00.mp4\x00.txt", "characters other than"),
        ("{root}/libero_spatial/run0.videos/task00_init00.mp4\n", "characters other than"),
        ("", "the name is empty"),
    ],
)
def test_a_name_that_is_not_a_plain_file_of_the_runs_folder_is_refused_unread(
    run: tuple[Path, RunFolder], tmp_path: Path, name: str, why: str
) -> None:
    root, where = run
    message = refused(name.format(root=root, tmp=tmp_path), where)
    assert why in message
    assert "\u202e" not in message and "\x00" not in message and "\n" not in message  # the name is shown escaped


def test_an_overlong_name_is_refused_and_shown_cut(run: tuple[Path, RunFolder]) -> None:
    root, where = run
    message = refused(str(root / "libero_spatial" / ("a" * NAME_MAX_CHARS)), where)
    assert f"over {NAME_MAX_CHARS}" in message and len(message) < 600


def test_symbolic_links_are_never_followed_whether_they_point_outside_or_inside(
    run: tuple[Path, RunFolder], tmp_path: Path
) -> None:
    root, where = run
    videos = root / "libero_spatial" / "run0.videos"
    (videos / "out.mp4").symlink_to(tmp_path / "outside" / "secret.mp4")
    (videos / "in.mp4").symlink_to(videos / "task00_init00.mp4")
    (root / "libero_spatial" / "linked.videos").symlink_to(tmp_path / "outside", target_is_directory=True)
    for name in ("run0.videos/out.mp4", "run0.videos/in.mp4", "linked.videos/secret.mp4"):
        assert "symbolic link" in refused(str(root / "libero_spatial" / name), where), name


def test_a_linked_suite_folder_below_the_results_root_is_refused(run: tuple[Path, RunFolder], tmp_path: Path) -> None:
    root, _ = run
    (tmp_path / "outside" / "run0.videos").mkdir()
    (tmp_path / "outside" / "run0.videos" / "v.mp4").write_bytes(SECRET_MP4)
    (root / "libero_goal").symlink_to(tmp_path / "outside", target_is_directory=True)
    where = RunFolder.of(str(root / "libero_goal"), str(root))
    assert "symbolic link" in refused(str(root / "libero_goal/run0.videos/v.mp4"), where)


def test_the_content_decides_the_type_not_the_name(run: tuple[Path, RunFolder]) -> None:
    root, where = run
    videos = root / "libero_spatial" / "run0.videos"
    (videos / "text.mp4").write_text("aws_access_key_id = AKIAABCDEFGHIJKLMNOP\n")
    (videos / "empty.mp4").write_bytes(b"")
    (videos / "anim.mp4").write_bytes(GIF)
    (videos / "clip.txt").write_bytes(MP4)
    assert "not a recognised media file" in refused(str(videos / "text.mp4"), where)
    assert "empty" in refused(str(videos / "empty.mp4"), where)
    assert read_named_file(str(videos / "anim.mp4"), where).media_type is MediaType.GIF
    assert read_named_file(str(videos / "clip.txt"), where).media_type is MediaType.MP4
    only_mp4 = frozenset({MediaType.MP4})
    assert "a image/gif file" in refused(str(videos / "anim.mp4"), where, accept=only_mp4)


def test_media_types_by_their_first_bytes() -> None:
    assert media_type_of(b"GIF87a...") is MediaType.GIF
    assert media_type_of(b"\x00\x00\x00\x20ftypmp42\x00\x00\x00\x00") is MediaType.MP4
    assert media_type_of(b"\x00\x00\x00\x20ftyp\x00\x01\x02\x03") is None  # no printable brand
    assert media_type_of(b"\xff\xff\xff\xffftypisom") is None  # an ftyp box of 4 GiB is no header
    assert media_type_of(b"<html>ftyp") is None


def test_a_file_over_the_bound_is_refused_without_reading_it(run: tuple[Path, RunFolder]) -> None:
    root, where = run
    big = root / "libero_spatial" / "run0.videos" / "big.mp4"
    with big.open("wb") as f:
        f.write(MP4)
        f.truncate(65 * 1024 * 1024)  # sparse: over the default 64 MiB bound, costs no disk
    assert "over the 67108864-byte bound" in refused(str(big), where)
    assert "over the 16-byte bound" in refused(
        str(root / "libero_spatial/run0.videos/task00_init00.mp4"), where, max_bytes=16
    )


def test_what_is_not_a_regular_file_is_refused_and_a_fifo_does_not_block(run: tuple[Path, RunFolder]) -> None:
    root, where = run
    videos = root / "libero_spatial" / "run0.videos"
    os.mkfifo(videos / "pipe.mp4")
    (videos / "folder.mp4").mkdir()
    assert "not a regular file" in refused(str(videos / "pipe.mp4"), where)
    assert "not a regular file" in refused(str(videos / "folder.mp4"), where)
    assert "does not exist" in refused(str(videos / "gone.mp4"), where)


def test_relative_names_resolve_against_the_same_folder_as_the_runs_result(
    run: tuple[Path, RunFolder], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = run
    monkeypatch.chdir(root)
    where = RunFolder.of("libero_spatial")
    assert read_named_file("libero_spatial/run0.videos/task00_init00.mp4", where).data == MP4
    assert "outside" in refused("../../../outside/secret.mp4".replace("../", "x/"), where)


def test_a_run_folder_outside_its_results_root_is_refused(run: tuple[Path, RunFolder], tmp_path: Path) -> None:
    root, _ = run
    with pytest.raises(NamedFileRefusedError, match="outside the results root"):
        RunFolder.of(str(tmp_path / "outside"), str(root))
    with pytest.raises(NamedFileRefusedError, match="outside the results root"):
        RunFolder.of(f"{root}/../../outside", str(root))
    with pytest.raises(NamedFileRefusedError, match=r"'\.\.' segment"):
        RunFolder.of("s3://results/req/../alice", "s3://results/req")


def test_s3_names_are_read_only_inside_the_runs_prefix_of_its_bucket_and_within_the_bound() -> None:
    import boto3
    from moto import mock_aws

    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        for bucket in ("results", "other-bucket"):
            s3.create_bucket(Bucket=bucket)
        good = "results/req/m1/libero_spatial/run0.videos/task00_init00.mp4"
        s3.put_object(Bucket="results", Key=good, Body=MP4)
        s3.put_object(Bucket="results", Key="results/req/m1/libero_spatial/run0.videos/empty.mp4", Body=b"")
        s3.put_object(Bucket="results", Key="alice/req/m1/libero_spatial/run0.videos/v.mp4", Body=SECRET_MP4)
        s3.put_object(Bucket="other-bucket", Key=good, Body=SECRET_MP4)
        storage = Storage(S3Objects(s3))
        where = RunFolder.of("s3://results/results/req/m1/libero_spatial", "s3://results/results/req/m1")
        assert read_named_file(f"s3://results/{good}", where, storage=storage).data == MP4
        for name, why in [
            (f"s3://other-bucket/{good}", "outside the run's own folder"),
            ("s3://results/alice/req/m1/libero_spatial/run0.videos/v.mp4", "outside the run's own folder"),
            ("s3://results/results/req/m1/libero_spatial/run0.videos/../../../../alice/v.mp4", "'..' segment"),
            ("s3://results/results/req/m1/libero_spatial/run0.videos/%2e%2e/v.mp4", "characters other than"),
            ("s3://results/results/req/m1/libero_spatial/run0.videos/gone.mp4", "does not exist"),
            ("s3://results/results/req/m1/libero_spatial/run0.videos/empty.mp4", "empty"),
            ("/proc/self/environ", "a local path is never read"),
        ]:
            assert why in refused(name, where, storage=storage), name
        assert "larger than 16 bytes" in refused(f"s3://results/{good}", where, storage=storage, max_bytes=16)
        assert "no S3 access" in refused(f"s3://results/{good}", where)
