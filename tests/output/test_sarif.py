"""SARIF logs of analyze, run and inject: valid against the official SARIF 2.1.0 schema
(tests/output/data, from OASIS), with locations a viewer can open.

PTX with ``.loc`` gives the CUDA source line first and the PTX line beside it; a cubin built
with -lineinfo gives the source line and the SASS offset; a cubin without line information
gives the SASS offset (``address``); every result names its kernel (logical location).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from kernelcheck.cli import main
from tests.conftest import FIXTURES

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
PTX = FIXTURES / "ptx" / "sm_90" / "elementwise.ptx"
CUBIN = FIXTURES / "cubin" / "sm_90" / "elementwise.cubin"
HOST = FIXTURES / "exe" / "vec_add_host"


def _valid(log: dict) -> dict:
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert log["version"] == "2.1.0"
    return log


def _sarif(tmp_path, *argv) -> tuple[int, dict]:
    out = tmp_path / "out.sarif"
    status = main(["analyze", *argv, "--format", "sarif", "-o", str(out)])
    return status, _valid(json.loads(out.read_text()))


def _results(log: dict, kernel: str) -> list[dict]:
    return [r for r in log["runs"][0]["results"] if r["properties"]["kernel"] == kernel]


def test_the_schema_is_the_official_one():
    assert SCHEMA["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SCHEMA).validate({"version": "2.1.0", "runs": [{}]})


def test_ptx_results_point_at_the_cuda_source_and_the_ptx_line(tmp_path):
    status, log = _sarif(tmp_path, str(PTX))
    assert status == 0
    rules = [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]]
    assert rules == ["KC000", "KC001", "KC002", "KC003"]
    vec_add = _results(log, "vec_add")
    assert len(vec_add) == 2 and all(r["ruleId"] == "KC001" for r in vec_add)
    first = vec_add[0]
    assert first["properties"]["class"] == "conditional"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("elementwise.cu")
    assert location["region"]["startLine"] == 14
    related = [r["physicalLocation"] for r in first["relatedLocations"]]
    ptx_lines = [r["region"]["startLine"] for r in related
                 if r["artifactLocation"]["uri"].endswith("elementwise.ptx")]
    text = PTX.read_text().splitlines()
    assert ptx_lines and all(text[n - 1].strip().startswith(("st.global", "ld.global"))
                             for n in ptx_lines)
    assert first["locations"][0]["logicalLocations"][0]["name"] == "vec_add"
    fill = _results(log, "fill_f32")
    assert fill[0]["kind"] == "pass" and fill[0]["level"] == "none"


def test_sass_results_give_the_offset_and_the_source_line(tmp_path):
    _, log = _sarif(tmp_path, str(CUBIN), "--kernel", "vec_add")
    (first, _second) = _results(log, "vec_add")
    assert "STG.E /*0120*/, line 14" in first["message"]["text"]
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] == 14
    addresses = [r["physicalLocation"]["address"] for r in first["relatedLocations"]
                 if "address" in r["physicalLocation"]]
    assert {"relativeAddress": 0x120, "kind": "instruction"}.items() <= addresses[0].items()
    assert addresses[0]["fullyQualifiedName"] == "vec_add+0x120"


def test_sass_without_line_information_gives_the_offset_in_the_binary(tmp_path):
    _, log = _sarif(tmp_path, str(HOST), "--arch", "sm_90")
    (first, *_) = _results(log, "vec_add")
    physical = first["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"].endswith("vec_add_host")
    assert physical["address"]["relativeAddress"] > 0


def test_fail_on_classes_are_errors_and_set_the_exit_status(tmp_path):
    status, log = _sarif(tmp_path, str(FIXTURES / "ptx" / "sm_90" / "atomics.ptx"),
                         "--fail-on", "never")
    assert status == 1
    never = [r for r in log["runs"][0]["results"] if r["properties"]["class"] == "never"]
    assert never and all(r["level"] == "error" for r in never)
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_run_report_as_sarif():
    from kernelcheck.output.sarif import run_sarif
    from kernelcheck.shim.report import KernelCounts, RunReport

    report = RunReport((KernelCounts("vec_add", "ab" * 32, "any", 1, 1, 0,
                                     (("disjoint", 1), ("overlap", 1)), "conditional",
                                     ("not idempotent when out overlaps a (...)",)),),
                       0, (), 1)
    log = _valid(run_sarif(report, ["kernelcheck", "run", "--", "prog"], 0))
    results = log["runs"][0]["results"]
    assert [(r["properties"]["verdict"], r["occurrenceCount"]) for r in results] == [
        ("idempotent", 1), ("not_idempotent", 1)]
    assert results[1]["properties"]["reason"].startswith("not idempotent when")


def test_inject_campaign_as_sarif(capsys, tmp_path):
    status = main(["inject", "saxpy", "--trials", "4", "--format", "sarif", "--no-figure",
                   "-o", str(tmp_path / "c"), "--fail-on", "SDC"])
    log = _valid(json.loads(capsys.readouterr().out))
    outcomes = {r["properties"]["verdict"] for r in log["runs"][0]["results"]}
    assert outcomes and outcomes <= {"masked", "SDC", "DUE"}
    assert status == (1 if "SDC" in outcomes else 0)
    assert all(r["properties"]["class"] == "conditional" for r in log["runs"][0]["results"])
