"""ProbeName is the one list of probes: each has a command, a Job, targets, and is in the intake default."""

from __future__ import annotations

import importlib

import pytest
import yaml
from pydantic import ValidationError

from infra_probes.probe_cli import PROBES, build_parser
from rlinf_bench.baselines import KNOWN_PROBES, infra_target
from rlinf_bench.contracts import EvalRequest, ProbeName, ProbeSpec
from rlinf_bench.errors import ContractError, InvalidRequestError
from rlinf_bench.intake.config import DEFAULT_PROBES, IntakeConfig
from rlinf_bench.request_checks import check_probe
from rlinf_k8s import jobs
from tests.unit.k8s.conftest import make_request

ALL = list(ProbeName)
#: The arguments each probe needs to start (PROBE_REQUIRED_ARGS).
STARTABLE_ARGS: dict[ProbeName, list[str]] = {
    ProbeName.GPU: [],
    ProbeName.NCCL: [],
    ProbeName.STORAGE: ["--path", "/fsx"],
    ProbeName.CHECKPOINT_IO: ["--path", "/fsx"],
    ProbeName.THROUGHPUT: ["--experiment", "exp"],
    ProbeName.SIM_CANARY: [],
}


def _subcommands() -> set[str]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "probe"]  # the PROBE sub-parsers
    return set(sub.choices or {})


def test_every_probe_name_has_an_infra_probes_command_and_module() -> None:
    assert _subcommands() == set(ProbeName) == set(PROBES)
    for name in ProbeName:
        module = importlib.import_module(PROBES[name])
        for entry in ("add_arguments", "settings_from_args", "measure", "environment"):
            assert callable(getattr(module, entry)), f"infra_probes.{name} lacks {entry}()"


@pytest.mark.parametrize("name", ALL)
def test_a_probe_job_without_the_probes_required_arguments_is_not_built(name: ProbeName) -> None:
    if not STARTABLE_ARGS[name]:
        pytest.skip(f"{name} starts without arguments")
    request = make_request(probes=[ProbeSpec(name=name)])
    with pytest.raises(InvalidRequestError, match=STARTABLE_ARGS[name][0]):
        jobs.jobs_for_request(request)


@pytest.mark.parametrize("name", ALL)
def test_every_probe_name_gets_a_job_that_runs_its_command(name: ProbeName) -> None:
    request = make_request(probes=[ProbeSpec(name=name, args=STARTABLE_ARGS[name])])

    (bundle,) = [b for b in jobs.jobs_for_request(request) if b.kind == "probe"]

    job = yaml.safe_load(yaml.safe_dump(bundle.manifests()[-1]))  # plain strings in the manifest, not enums
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[command.index("infra_probes") + 1] == name.value
    assert name.value.replace("_", "-") in job["metadata"]["name"]


def test_every_probe_name_is_known_to_the_infra_targets_and_every_target_names_a_probe() -> None:
    assert set(KNOWN_PROBES) == set(ProbeName)
    for name in ProbeName:
        infra_target(name, "no-such-metric")  # known: no UnknownBaselineError
    from rlinf_bench.baselines.probe_targets import _infra_data

    with_targets = {row["probe"] for row in _infra_data()["targets"]} | {ProbeName.NCCL}
    # throughput has no fixed target: it "depends on batch size and envs" (the brief); sim_canary's target is
    # its shipped reference fingerprint (no episode may move), not a figure of the registry.
    assert with_targets == set(ProbeName) - {ProbeName.THROUGHPUT, ProbeName.SIM_CANARY}


def test_the_intake_runs_by_default_only_the_probes_that_start_without_arguments() -> None:
    assert DEFAULT_PROBES == (ProbeName.GPU, ProbeName.NCCL)
    assert [p.name for p in IntakeConfig().probes] == [ProbeName.GPU, ProbeName.NCCL]
    for probe in IntakeConfig().probes:
        check_probe(probe, where="probes")  # the built-in default passes the Plan's checks


def test_given_an_unknown_probe_name_then_the_error_lists_the_allowed_ones() -> None:
    with pytest.raises(ValidationError) as err:
        ProbeSpec(name="disk")
    message = str(err.value)
    assert all(f"'{name}'" in message for name in ProbeName)


def test_given_a_request_with_an_unknown_probe_then_the_contract_error_names_the_field_and_values() -> None:
    data = {"checkpoint": {"uri": "/x/exp/checkpoints/global_step_1"}, "probes": [{"name": "disk"}]}
    with pytest.raises(ContractError, match=r"request\.json(.|\n)*probes\.0\.name(.|\n)*'throughput' or 'sim_canary'"):
        EvalRequest.from_dict(data, source="request.json")


@pytest.mark.parametrize("name", ALL)
def test_the_plans_table_of_required_probe_arguments_matches_each_probes_parser(name: ProbeName) -> None:
    from rlinf_bench.contracts.probes import PROBE_REQUIRED_ARGS

    parser = build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "probe"]
    probe_parser = (sub.choices or {})[name]
    options = {opt for action in probe_parser._actions for opt in action.option_strings}
    required = {action.option_strings[0] for action in probe_parser._actions if action.required}
    listed = {opt for group, _ in PROBE_REQUIRED_ARGS[name] for opt in group}
    assert listed <= options  # every option the Plan asks for exists
    assert required <= listed  # every option the parser requires is checked at Plan
