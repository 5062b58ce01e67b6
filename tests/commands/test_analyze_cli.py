"""`kernelcheck analyze` on every fixture, the bundled default, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kernelcheck.cli import main
from tests.conftest import FIXTURES, fixture_ptx_files

PTX_FILES = fixture_ptx_files()


@pytest.mark.parametrize("path", PTX_FILES, ids=[p.name + "-" + p.parent.name for p in PTX_FILES])
def test_analyze_json_on_every_fixture(path, capsys):
    assert main(["analyze", "--json", str(path)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["format_version"] == 1
    kernels = [k for m in document["modules"] for k in m["kernels"]]
    assert kernels
    for kernel in kernels:
        assert {"name", "demangled", "params", "instruction_count", "blocks", "loops",
                "accesses"} <= kernel.keys()
        assert kernel["instruction_count"] > 0
        for access in kernel["accesses"]:
            assert access["kind"] in {"read", "write", "atomic", "copy"}
            assert access["space"] in {"global", "shared", "generic"}


def test_analyze_text_names_pointers_loops_and_lines(capsys):
    assert main(["analyze", str(FIXTURES / "ptx/sm_90/gridstride.ptx")]) == 0
    out = capsys.readouterr().out
    assert "entry scale_gridstride:" in out
    assert "loop: header $L__BB0_2, latch $L__BB0_2" in out
    assert "scale_gridstride_param_0  .u64    8 B at +0  pointer" in out
    assert "scale_gridstride_param_3  .u32    4 B at +20\n" in out
    assert "gridstride.cu:" in out


def test_pointer_detection_on_vec_add(capsys):
    main(["analyze", "--json", "--kernel", "vec_add", str(FIXTURES / "ptx/sm_90/elementwise.ptx")])
    kernel = json.loads(capsys.readouterr().out)["modules"][0]["kernels"][0]
    assert [p["used_as_pointer"] for p in kernel["params"]] == [True, True, True, False]
    assert [(a["kind"], a["width"]) for a in kernel["accesses"]] == [
        ("read", 4), ("read", 4), ("write", 4)
    ]


def test_without_file_the_bundled_example_is_analysed(capsys):
    assert main(["analyze"]) == 0
    out = capsys.readouterr().out
    assert "bundled example elementwise.ptx" in out and "entry vec_add:" in out


def test_unknown_kernel_is_one_line_exit_2(capsys):
    assert main(["analyze", "--kernel", "nope", str(FIXTURES / "ptx/sm_90/elementwise.ptx")]) == 2
    err = capsys.readouterr().err.strip()
    assert "no kernel named 'nope'" in err and "\n" not in err


@pytest.mark.parametrize(
    "content",
    [b"", b"\x7fELF\x02\x01\x01" + b"\x00" * 9, bytes(range(256)) * 64,
     b".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret }\n"],
    ids=["empty", "truncated-elf", "garbage", "malformed-ptx"],
)
def test_bad_input_is_one_line_exit_2_without_traceback(tmp_path, content):
    path = tmp_path / "input.ptx"
    path.write_bytes(content)
    result = subprocess.run(
        [sys.executable, "-m", "kernelcheck.cli", "analyze", str(path)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kernelcheck: error: ")
    assert str(path) in lines[0]


def test_missing_file(capsys):
    assert main(["analyze", "/nonexistent/k.ptx"]) == 2
    assert "cannot read" in capsys.readouterr().err
