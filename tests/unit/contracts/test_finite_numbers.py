"""Finite numbers only: Infinity, NaN and overflowing numbers are refused when a document is read, naming the
field, and a document that would not read back is never written."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rlinf_bench.contracts import ProbeResult, RunResult
from rlinf_bench.contracts.probes import Measurement
from rlinf_bench.errors import ContractError
from tests.unit.stats.runfactory import make_run


def probe_json(value: str) -> str:
    return (
        '{"schema_version": "1.0", "probe": "storage", "verdict": "pass", '
        f'"values": {{"read_gbps": {{"value": {value}, "unit": "GB/s"}}}}}}'
    )


@pytest.mark.parametrize(
    ("literal", "shown"), [("Infinity", "Infinity"), ("-Infinity", "-Infinity"), ("NaN", "NaN"), ("1e999", "Infinity")]
)
def test_a_probe_value_that_is_not_finite_is_refused_at_read_naming_the_file_and_field(
    tmp_path: Path, literal: str, shown: str
) -> None:
    path = tmp_path / "probe.json"
    path.write_text(probe_json(literal))
    with pytest.raises(ContractError) as err:
        ProbeResult.load(path)
    assert str(path) in str(err.value)
    assert f"field values.read_gbps.value: {shown} is not a finite number" in str(err.value)


def test_a_non_finite_number_anywhere_in_a_run_result_is_refused_naming_its_path() -> None:
    doc = json.loads(make_run({0: [1, 0]}).to_json())
    doc["tasks"][0]["episodes"][1]["wall_s"] = math.nan
    with pytest.raises(ContractError, match=r"field tasks\.0\.episodes\.1\.wall_s: NaN"):
        RunResult.from_json(json.dumps(doc), source="run.json")  # json.dumps writes the NaN literal
    with pytest.raises(ContractError, match=r"field tasks\.0\.episodes\.1\.wall_s: NaN"):
        RunResult.from_dict(doc, source="run.json")


def test_a_document_that_would_not_read_back_is_not_written() -> None:
    probe = ProbeResult(probe="gpu", verdict="pass", values={"util": Measurement(value=math.inf, unit="%")})
    with pytest.raises(ContractError, match=r"values\.util\.value = Infinity.*would not read back"):
        probe.to_json()


def test_an_optional_non_finite_number_reads_back_as_none() -> None:
    probe = ProbeResult(probe="gpu", verdict="pass", wall_s=1.0, details={"ratio": math.inf})
    back = ProbeResult.from_json(probe.to_json())
    assert back.details == {"ratio": None}
