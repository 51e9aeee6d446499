"""materialize_checkpoint: local paths are checked, S3 checkpoints download only what a policy loads (moto); the
layout the intake found is trusted, and only a checkpoint nobody has looked at has its layout told here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from eval_runner.checkpoint_fetch import materialize_checkpoint
from eval_runner.demo_checkpoint import write_demo_checkpoint
from eval_runner.policies.factory import load_policy
from rlinf_aws.s3_objects import S3Objects
from rlinf_bench.contracts.checkpoint import CheckpointLayout
from rlinf_bench.errors import CheckpointError

BUCKET = "rlinf-ckpts"
PREFIX = "runs/demo/checkpoints/global_step_100"


class CountingS3:
    """The real (moto) client, counting downloads so cache reuse is observable."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.downloaded: list[str] = []

    def download_file(self, bucket: str, key: str, filename: str) -> None:
        self.downloaded.append(key)
        self._client.download_file(bucket, key, filename)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[CountingS3]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield CountingS3(client)


def upload_tree(s3: CountingS3, root: Path, prefix: str = PREFIX) -> None:
    s3.put_object(Bucket=BUCKET, Key=f"{prefix}/actor/")  # FSx exports directories as empty "dir/" keys
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        s3.put_object(Bucket=BUCKET, Key=f"{prefix}/{path.relative_to(root).as_posix()}", Body=path.read_bytes())


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    return Path(write_demo_checkpoint(tmp_path / "src").uri)


def test_given_local_checkpoint_then_its_path_is_returned(demo_root: Path, tmp_path: Path) -> None:
    assert materialize_checkpoint(str(demo_root), tmp_path / "cache") == demo_root
    assert materialize_checkpoint(f"file://{demo_root}", tmp_path / "cache") == demo_root
    assert not (tmp_path / "cache").exists()  # nothing copied for local checkpoints


def test_given_missing_local_path_then_error_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "runs" / "global_step_9"
    with pytest.raises(CheckpointError, match=f"checkpoint {missing} does not exist"):
        materialize_checkpoint(str(missing), tmp_path)


def test_given_local_checkpoint_without_weights_then_error_says_incomplete(demo_root: Path, tmp_path: Path) -> None:
    (demo_root / "actor/model_state_dict/full_weights.pt").unlink()
    with pytest.raises(CheckpointError, match="incomplete"):
        materialize_checkpoint(str(demo_root), tmp_path)


def test_given_s3_checkpoint_then_only_weights_are_downloaded_and_policy_loads(
    s3: CountingS3, demo_root: Path, tmp_path: Path
) -> None:
    upload_tree(s3, demo_root)
    local = materialize_checkpoint(f"s3://{BUCKET}/{PREFIX}/", tmp_path / "cache", objects=S3Objects(s3))
    assert local == tmp_path / "cache" / BUCKET / PREFIX
    assert s3.downloaded == [f"{PREFIX}/actor/model_state_dict/full_weights.pt"]  # no DCP/optimizer shards
    weights = "actor/model_state_dict/full_weights.pt"
    assert (local / weights).read_bytes() == (demo_root / weights).read_bytes()
    assert (
        load_policy("builtin:demo", local).describe()["weights_sha256"]
        == load_policy("builtin:demo", demo_root).describe()["weights_sha256"]
    )


def test_given_complete_cached_copy_then_nothing_is_downloaded_again(
    s3: CountingS3, demo_root: Path, tmp_path: Path
) -> None:
    upload_tree(s3, demo_root)
    uri = f"s3://{BUCKET}/{PREFIX}"
    first = materialize_checkpoint(uri, tmp_path / "cache", objects=S3Objects(s3))
    second = materialize_checkpoint(uri, tmp_path / "cache", objects=S3Objects(s3))
    assert first == second and len(s3.downloaded) == 1


def test_given_object_changed_or_local_copy_damaged_then_it_is_downloaded_again(
    s3: CountingS3, demo_root: Path, tmp_path: Path
) -> None:
    upload_tree(s3, demo_root)
    uri = f"s3://{BUCKET}/{PREFIX}"
    local = materialize_checkpoint(uri, tmp_path / "cache", objects=S3Objects(s3))
    other = Path(write_demo_checkpoint(tmp_path / "other", seed=3).uri)
    upload_tree(s3, other)  # same key, new content (new ETag)
    materialize_checkpoint(uri, tmp_path / "cache", objects=S3Objects(s3))
    weights = local / "actor/model_state_dict/full_weights.pt"
    assert weights.read_bytes() == (other / "actor/model_state_dict/full_weights.pt").read_bytes()
    weights.write_bytes(b"truncated")
    materialize_checkpoint(uri, tmp_path / "cache", objects=S3Objects(s3))
    assert len(s3.downloaded) == 3 and weights.stat().st_size > 100


def test_given_v01_checkpoint_then_model_folder_is_downloaded_without_shards(s3: CountingS3, tmp_path: Path) -> None:
    for key in ("actor/.metadata", "actor/__0_0.distcp", "actor/model/model.safetensors", "actor/model/config.json"):
        s3.put_object(Bucket=BUCKET, Key=f"{PREFIX}/{key}", Body=b"x" * 10)
    local = materialize_checkpoint(f"s3://{BUCKET}/{PREFIX}", tmp_path / "cache", objects=S3Objects(s3))
    assert sorted(s3.downloaded) == [f"{PREFIX}/actor/model/config.json", f"{PREFIX}/actor/model/model.safetensors"]
    assert (local / "actor/model/model.safetensors").is_file()


def test_given_export_not_finished_then_error_says_incomplete(s3: CountingS3, demo_root: Path, tmp_path: Path) -> None:
    for path in (demo_root / "actor/dcp_checkpoint").iterdir():
        s3.put_object(Bucket=BUCKET, Key=f"{PREFIX}/actor/dcp_checkpoint/{path.name}", Body=path.read_bytes())
    with pytest.raises(CheckpointError, match=r"no weights file yet .* incomplete"):
        materialize_checkpoint(f"s3://{BUCKET}/{PREFIX}", tmp_path / "cache", objects=S3Objects(s3))
    assert s3.downloaded == []


def test_given_prefix_without_objects_then_error_names_uri(s3: CountingS3, tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match=f"checkpoint s3://{BUCKET}/nothing/here has no objects under actor/"):
        materialize_checkpoint(f"s3://{BUCKET}/nothing/here", tmp_path, objects=S3Objects(s3))


def test_given_missing_bucket_then_error_names_uri_and_permissions(s3: CountingS3, tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match=r"cannot list checkpoint s3://no-such-bucket/x \(NoSuchBucket"):
        materialize_checkpoint("s3://no-such-bucket/x", tmp_path, objects=S3Objects(s3))


def test_given_uri_without_bucket_then_error(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="has no bucket"):
        materialize_checkpoint("s3:///prefix", tmp_path)


def test_given_no_client_then_a_default_one_is_created(s3: CountingS3, demo_root: Path, tmp_path: Path) -> None:
    upload_tree(s3, demo_root)
    local = materialize_checkpoint(f"s3://{BUCKET}/{PREFIX}", tmp_path / "cache")
    assert (local / "actor/model_state_dict/full_weights.pt").is_file()


def test_given_the_layout_the_intake_found_then_it_is_trusted_not_told_again(s3: CountingS3, tmp_path: Path) -> None:
    # A v0.1 checkpoint with a stray file under model_state_dict/: told from its files it would be fsdp_dcp.
    for key in ("actor/.metadata", "actor/__0_0.distcp", "actor/model/model.safetensors", "actor/model_state_dict/x"):
        s3.put_object(Bucket=BUCKET, Key=f"{PREFIX}/{key}", Body=b"x" * 10)
    uri = f"s3://{BUCKET}/{PREFIX}"

    local = materialize_checkpoint(uri, tmp_path / "cache", layout=CheckpointLayout.V01, objects=S3Objects(s3))

    assert s3.downloaded == [f"{PREFIX}/actor/model/model.safetensors"]
    assert (local / "actor/model/model.safetensors").is_file()


def test_given_a_layout_whose_weights_are_gone_then_the_error_says_so_and_which_layout_the_files_are(
    s3: CountingS3, demo_root: Path, tmp_path: Path
) -> None:
    upload_tree(s3, demo_root)  # fsdp_dcp files, while the request says v01
    with pytest.raises(CheckpointError, match=r"\(v01\) has no weights file yet") as info:
        materialize_checkpoint(f"s3://{BUCKET}/{PREFIX}", tmp_path, layout=CheckpointLayout.V01, objects=S3Objects(s3))
    assert "its files are those of layout fsdp_dcp, not v01 as its request says" in info.value.__notes__
    assert s3.downloaded == []
    with pytest.raises(CheckpointError, match="no weights file for layout v01"):
        materialize_checkpoint(str(demo_root), tmp_path, layout=CheckpointLayout.V01)


def test_given_a_megatron_checkpoint_without_its_iteration_file_then_its_layout_is_told_by_the_one_rule(
    s3: CountingS3, tmp_path: Path
) -> None:
    for key in ("actor/iter_0000100/mp_rank_00/model_optim_rng.pt", "actor/iter_0000100/mp_rank_01/model_optim_rng.pt"):
        s3.put_object(Bucket=BUCKET, Key=f"{PREFIX}/{key}", Body=b"x" * 10)

    local = materialize_checkpoint(f"s3://{BUCKET}/{PREFIX}", tmp_path / "cache", objects=S3Objects(s3))

    assert sorted(s3.downloaded) == [
        f"{PREFIX}/actor/iter_0000100/mp_rank_00/model_optim_rng.pt",
        f"{PREFIX}/actor/iter_0000100/mp_rank_01/model_optim_rng.pt",
    ]
    assert (local / "actor/iter_0000100/mp_rank_00/model_optim_rng.pt").is_file()
