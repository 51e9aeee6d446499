"""ProbeName is the one list of probes: each has a command, a Job, targets, and is in the intake default."""

from __future__ import annotations

import importlib

import pytest
import yaml
from pydantic import ValidationError

from infra_probes.probe_cli import PROBES, build_parser
from rlinf_bench.baselines import KNOWN_PROBES, infra_target
from rlinf_bench.contracts import EvalRequest, ProbeName, ProbeSpec
from rlinf_bench.errors import ContractError
from rlinf_bench.intake.config import DEFAULT_PROBES, IntakeConfig
from rlinf_k8s import jobs
from tests.unit.k8s.conftest import make_request

ALL = list(ProbeName)


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
def test_every_probe_name_gets_a_job_that_runs_its_command(name: ProbeName) -> None:
    request = make_request(probes=[ProbeSpec(name=name)])

    bundle = jobs.probe_job(request, request.probes[0])

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
    # throughput has no fixed target: it "depends on batch size and envs" (the brief).
    assert with_targets == set(ProbeName) - {ProbeName.THROUGHPUT}


def test_the_intake_runs_every_probe_by_default() -> None:
    assert tuple(ProbeName) == DEFAULT_PROBES
    assert [p.name for p in IntakeConfig().probes] == ALL


def test_given_an_unknown_probe_name_then_the_error_lists_the_allowed_ones() -> None:
    with pytest.raises(ValidationError) as err:
        ProbeSpec(name="disk")
    message = str(err.value)
    assert all(f"'{name}'" in message for name in ProbeName)


def test_given_a_request_with_an_unknown_probe_then_the_contract_error_names_the_field_and_values() -> None:
    data = {"checkpoint": {"uri": "/x/exp/checkpoints/global_step_1"}, "probes": [{"name": "disk"}]}
    with pytest.raises(
        ContractError, match=r"request\.json(.|\n)*probes\.0\.name(.|\n)*'checkpoint_io' or 'throughput'"
    ):
        EvalRequest.from_dict(data, source="request.json")
