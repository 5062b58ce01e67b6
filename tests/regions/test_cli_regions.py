"""``kernelcheck analyze --regions``: the text section and the JSON ``regions`` field."""

from __future__ import annotations

import json
from pathlib import Path

from kernelcheck.cli import main

PTX = Path(__file__).resolve().parents[2] / "fixtures" / "ptx" / "sm_80"


def test_text_names_the_boundary_and_the_clobber_it_cuts(capsys):
    main(["analyze", str(PTX / "inplace.ptx"), "--kernel", "inplace_add_one", "--regions"])
    out = capsys.readouterr().out
    assert "regions of inplace_add_one:" in out
    assert "boundary before #12" in out and "cuts read ld.global.f32 #11" in out
    assert "live state 12 bytes per thread" in out


def test_json_has_regions_per_kernel(capsys):
    main(["analyze", str(PTX / "atomics.ptx"), "--regions", "--json"])
    kernels = json.loads(capsys.readouterr().out)["modules"][0]["kernels"]
    by_name = {k["name"]: k["regions"] for k in kernels}
    assert by_name["atomic_max_const"]["status"] == "one_region"
    assert by_name["atomic_sub_budget"]["boundaries"][0]["after_atomic"] is not None


def test_without_the_option_there_is_no_regions_field(capsys):
    main(["analyze", str(PTX / "atomics.ptx"), "--json"])
    kernels = json.loads(capsys.readouterr().out)["modules"][0]["kernels"]
    assert all("regions" not in k for k in kernels)
