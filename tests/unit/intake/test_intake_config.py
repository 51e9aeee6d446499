"""The intake configuration: brief defaults, YAML/JSON sources, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlinf_bench.contracts.checkpoint import CheckpointRef
from rlinf_bench.contracts.probes import OPT_IN_PROBES, ProbeName
from rlinf_bench.errors import ConfigError
from rlinf_bench.intake.config import IntakeConfig, load_intake_config, parse_config_text

REF = CheckpointRef(uri="s3://b/runs/e/checkpoints/global_step_9", experiment="e", global_step=9)


def test_given_no_source_then_the_request_follows_the_brief() -> None:
    request = load_intake_config("").request_for(REF)

    assert [s.name for s in request.suites] == ["libero_spatial", "libero_object", "libero_goal", "libero_10"]
    assert (request.runs, request.trials_per_task, request.seeds) == (3, 50, [0, 1, 2])
    # Only the probes that start without arguments: storage, checkpoint_io and throughput need theirs.
    assert [p.name for p in request.probes] == ["gpu", "nccl"]
    assert request.baselines == ["libero/openvla-oft-rlinf", "previous", "best"]
    assert request.request_id.startswith("e-s9-")


def test_given_a_yaml_file_with_short_forms_then_they_are_expanded(tmp_path: Path) -> None:
    path = tmp_path / "intake.yaml"
    path.write_text(
        "suites: [libero_10, {name: libero_goal, tasks: [0, 1]}]\nprobes: [gpu]\nruns: 2\nquiet_period_s: 5\n"
    )

    config = load_intake_config(str(path))

    request = config.request_for(REF)
    assert [(s.name, s.tasks) for s in request.suites] == [("libero_10", None), ("libero_goal", [0, 1])]
    assert request.runs == 2 and config.quiet_period_s == 5


def test_given_the_same_checkpoint_twice_then_the_request_json_is_identical() -> None:
    config = IntakeConfig()
    assert config.request_for(REF).to_json() == config.request_for(REF).to_json()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("runs: 0", "runs"),
        ("runz: 3", "runz"),
        ("runs: 4", "seeds has 3 entries"),
        ("{bad json", "not valid JSON"),
        ("- a\n- b", "must be a mapping"),
        ("a: [", "not valid YAML"),
        ("root_patterns: ['(?P<root>x)']", "lacks the named group"),
    ],
)
def test_given_a_bad_config_then_the_error_names_the_source_and_field(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_config_text(text, source="ssm:/rlinf/intake")
    assert "ssm:/rlinf/intake" in str(info.value) or "root pattern" in str(info.value)


def test_given_a_missing_file_or_no_client_then_the_error_says_how_to_fix_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_intake_config(str(tmp_path / "nope.yaml"))
    with pytest.raises(ConfigError, match="no SSM access here"):
        load_intake_config("ssm:/x")
    with pytest.raises(ConfigError, match="no S3 access here"):
        load_intake_config("s3://bucket/intake.yaml")


def test_given_the_example_config_then_it_loads_and_matches_the_defaults_but_for_the_probes_args() -> None:
    example = Path(__file__).resolve().parents[3] / "examples" / "intake-config.yaml"
    loaded = load_intake_config(str(example)).request_for(REF)
    default = IntakeConfig().request_for(REF)
    # The example lists every probe but the opt-in ones (sim_canary), each with the arguments it needs to start.
    assert {p.name for p in loaded.probes} == set(ProbeName) - set(OPT_IN_PROBES)
    assert loaded.model_dump(exclude={"probes", "request_id"}) == default.model_dump(exclude={"probes", "request_id"})


def test_given_kubernetes_settings_in_the_config_then_every_started_request_carries_them() -> None:
    # GIVEN an intake config that names the cluster's namespace and service account
    config = parse_config_text(
        "kubernetes:\n  namespace: rl-eval\n  service_account: evaluator\nworkers: 4\n", source="cfg.yaml"
    )
    # WHEN the router builds the Step Functions input for a checkpoint
    request = config.request_for(REF)
    # THEN the Jobs it leads to run where the config says, with the config's matrix
    assert request.kubernetes.namespace == "rl-eval"
    assert request.kubernetes.service_account == "evaluator"
    assert request.workers == 4


def test_given_robustness_in_the_config_then_every_request_plays_it_and_bad_axes_are_refused_at_load() -> None:
    request = parse_config_text("robustness: quick\n", source="cfg.yaml").request_for(REF)
    assert request.robustness is not None and request.robustness.profile == "quick"
    assert all(run.robustness == request.robustness for run in request.expand())
    assert load_intake_config("").request_for(REF).robustness is None  # off by default
    with pytest.raises(ConfigError, match="'gravity' is no axis"):
        parse_config_text("robustness: gravity:2\n", source="cfg.yaml")


def test_every_field_that_says_what_to_run_is_configurable_in_the_intake() -> None:
    from rlinf_bench.contracts.request import EVAL_MATRIX_FIELDS

    assert set(IntakeConfig.model_fields) >= EVAL_MATRIX_FIELDS


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("probes: [gpu, storage]", ["probes[1]", "storage", "--path"]),
        ("probes: [{name: throughput, args: [--tracking-uri, http://mlflow]}]", ["throughput", "--experiment"]),
    ],
)
def test_a_config_with_a_probe_that_cannot_start_is_refused_at_load_naming_the_probe(
    text: str, names: list[str]
) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config_text(text, source="intake.yaml")
    for name in ["intake.yaml", *names]:
        assert name in str(info.value)
