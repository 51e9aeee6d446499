"""Object keys -> checkpoints: what counts, what is ignored, what is refused."""

from __future__ import annotations

import pytest

from rlinf_bench.checkpoints.keys import KeyIgnored, KeyMatch, parse_key, ref_for_location, ref_from_root_uri, split_uri
from rlinf_bench.contracts.checkpoint import CheckpointLayout
from rlinf_bench.errors import ConfigError, InvalidEventError

ROOT = "fsx/runs/libero10-rl/checkpoints/global_step_200"


@pytest.mark.parametrize(
    ("relative", "layout"),
    [
        ("actor/model_state_dict/full_weights.pt", CheckpointLayout.FSDP_DCP),
        ("actor/model/model.safetensors", CheckpointLayout.V01),
        ("actor/optim.pt", CheckpointLayout.LEGACY_PT),
        ("actor/latest_checkpointed_iteration.txt", CheckpointLayout.MEGATRON),
    ],
)
def test_given_a_layouts_last_file_then_the_key_maps_to_its_checkpoint_as_a_trigger(
    relative: str, layout: CheckpointLayout
) -> None:
    match = parse_key(f"{ROOT}/{relative}", bucket="ckpts")

    assert isinstance(match, KeyMatch)
    assert (match.root_prefix, match.experiment, match.global_step) == (ROOT, "libero10-rl", 200)
    assert match.trigger_layout is layout
    ref = match.checkpoint_ref()
    assert ref.uri == f"s3://ckpts/{ROOT}" and ref.layout is layout


def test_given_a_shard_then_it_belongs_to_the_checkpoint_but_is_not_a_trigger() -> None:
    match = parse_key(f"{ROOT}/actor/dcp_checkpoint/__17_0.distcp", bucket="b")
    assert isinstance(match, KeyMatch) and not match.is_trigger


def test_given_a_checkpoint_directly_under_the_bucket_then_the_experiment_is_the_first_segment() -> None:
    match = parse_key("exp/checkpoints/global_step_5/actor/model_state_dict/full_weights.pt", bucket="b")
    assert isinstance(match, KeyMatch) and (match.root_prefix, match.experiment) == (
        "exp/checkpoints/global_step_5",
        "exp",
    )


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        (f"{ROOT}/actor/", "directory marker"),
        (f"{ROOT}/", "directory marker"),
        (f"{ROOT}/actor/model_state_dict/full_weights.pt.tmp", "temporary file"),
        (f"{ROOT}/actor/dcp_checkpoint/.nfs000123", "temporary file"),
        ("fsx/runs/libero10-rl/logs/events.out.tfevents", "outside the configured checkpoint roots"),
        ("fsx/runs/libero10-rl/checkpoints/global_step_200/critic/w.pt", "outside the configured checkpoint roots"),
    ],
)
def test_given_markers_temp_files_and_foreign_keys_then_they_are_ignored_with_a_reason(key: str, reason: str) -> None:
    result = parse_key(key)
    assert isinstance(result, KeyIgnored) and result.reason == reason


def test_given_dcp_metadata_then_it_is_not_mistaken_for_a_temp_file() -> None:
    assert isinstance(parse_key(f"{ROOT}/actor/dcp_checkpoint/.metadata"), KeyMatch)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("", "empty object key"),
        (f"fsx/../{ROOT}/actor/optim.pt", "path traversal"),
        (f"{ROOT}/actor/./optim.pt", "path traversal"),
        (f"/{ROOT}/actor/optim.pt", "starts with '/'"),
        ("fsx//runs/x/checkpoints/global_step_1/actor/optim.pt", "empty path segment"),
        (f"{ROOT}/actor/optim\x00.pt", "odd characters"),
        (f"{ROOT}/actor/optim\\.pt", "odd characters"),
        (f"{ROOT}/actor/opt\u200bim.pt", "odd characters"),
        ("runs/x/checkpoints/global_step_12a/actor/optim.pt", "is not a number"),
        ("runs/x/checkpoints/global_step_/actor/optim.pt", "is not a number"),
        ("runs/x/checkpoints/global_step_\u0663/actor/optim.pt", "is not a number"),
        ("a" * 1025, "1025 bytes long"),
        # 400 characters but 1,200 bytes: S3 counts the UTF-8 encoding, and so does the backlog's table key.
        ("runs/" + "实" * 400 + "/checkpoints/global_step_1/actor/optim.pt", "1246 bytes long"),
    ],
)
def test_given_an_unsafe_or_unparseable_key_then_it_is_refused_naming_the_problem(key: str, message: str) -> None:
    with pytest.raises(InvalidEventError, match=message):
        parse_key(key)


def test_given_a_custom_root_pattern_then_other_layouts_of_storage_are_recognised() -> None:
    pattern = r"(?P<root>ckpt/(?P<experiment>[^/]+)/step-(?P<step>[^/]+))/(?P<rel>actor/.+)"
    match = parse_key("ckpt/exp9/step-40/actor/model_state_dict/full_weights.pt", patterns=(pattern,))
    assert isinstance(match, KeyMatch) and (match.experiment, match.global_step) == ("exp9", 40)


@pytest.mark.parametrize(("pattern", "message"), [("(", "not a valid regular expression"), ("(?P<root>.*)", "lacks")])
def test_given_a_broken_root_pattern_then_a_config_error_names_it(pattern: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_key("x/actor/y", patterns=(pattern,))


def test_given_uris_then_they_split_into_bucket_and_prefix() -> None:
    assert split_uri("s3://b/p/q/") == ("b", "p/q")
    assert split_uri("/local/dir/") == ("", "/local/dir")
    with pytest.raises(ConfigError, match="only s3://"):
        split_uri("gs://b/p")


def test_given_a_root_uri_then_the_ref_names_experiment_and_step_and_non_roots_are_refused() -> None:
    ref = ref_from_root_uri(f"s3://b/{ROOT}/")
    assert (ref.uri, ref.experiment, ref.global_step) == (f"s3://b/{ROOT}", "libero10-rl", 200)
    local = ref_from_root_uri(f"/{ROOT}")
    assert local.uri == f"/{ROOT}"
    with pytest.raises(ConfigError, match="not a checkpoint root"):
        ref_from_root_uri(f"s3://b/{ROOT}/actor")


def test_given_a_location_a_user_names_then_rlinf_folders_give_experiment_and_step_and_others_are_adhoc() -> None:
    ref = ref_for_location(f"s3://b/{ROOT}/")
    assert (ref.uri, ref.experiment, ref.global_step, ref.layout) == (f"s3://b/{ROOT}", "libero10-rl", 200, None)
    assert ref_for_location(f"file:///{ROOT}").uri == f"/{ROOT}"  # the same root as the router would name
    adhoc = ref_for_location("/tmp/weights.pt")
    assert (adhoc.uri, adhoc.experiment, adhoc.global_step) == ("/tmp/weights.pt", "adhoc", 0)
