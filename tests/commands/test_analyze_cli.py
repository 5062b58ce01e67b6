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
    assert "no kernel matches 'nope'" in err and "\n" not in err


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
    assert "no such file or directory" in capsys.readouterr().err


# ----------------------------------------------------------------------------- verdicts

ELEMENTWISE = str(FIXTURES / "ptx/sm_90/elementwise.ptx")
STRUCTS = str(FIXTURES / "ptx/sm_90/structs_calls.ptx")


def _kernel_json(capsys, *argv):
    assert main(["analyze", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)["modules"][0]["kernels"]


def test_text_report_gives_class_and_condition_in_words(capsys):
    assert main(["analyze", "--kernel", "vec_add", ELEMENTWISE]) == 0
    out = capsys.readouterr().out
    assert "idempotency: conditionally idempotent" in out
    assert ("not idempotent when vec_add_param_0 overlaps vec_add_param_1 (written "
            "[vec_add_param_0, vec_add_param_0 + 4*vec_add_param_3) by st.global.f32 #20, "
            "line 14; read [vec_add_param_1, vec_add_param_1 + 4*vec_add_param_3) by "
            "ld.global.f32 #16, line 14)") in out


def test_json_has_class_reasons_accesses_and_launch_check(capsys):
    kernels = {k["name"]: k for k in _kernel_json(capsys, ELEMENTWISE)}
    assert kernels["vec_add"]["class"] == "conditional"
    assert kernels["fill_f32"]["class"] == "always"
    assert kernels["fill_f32"]["reasons"] == ["only global writes, no global read"]
    write = [a for a in kernels["vec_add"]["accesses"] if a["kind"] == "write"][0]
    assert write["base"] == "vec_add_param_0" and write["width"] == 4
    assert "%tid.x" in write["address"] and "vec_add_param_3" in write["guard"]
    check = kernels["vec_add"]["launch_check"]
    assert check["format_version"] >= 1 and len(check["pairs"]) == 2


@pytest.mark.parametrize("placement,verdict,clobbered", [
    ("p0=0x7f3a00100000,p1=0x7f3a00000000,p2=0x7f3a00001000", "idempotent", None),
    ("vec_add_param_0=0x7f3a00000800,p1=0x7f3a00000000,p2=0x7f3a00100000",
     "not_idempotent", [[0x7F3A00000800, 0x7F3A00001000]]),
])
def test_instance_verdict_and_clobbered_bytes(capsys, placement, verdict, clobbered):
    (kernel,) = _kernel_json(capsys, "--kernel", "vec_add", "--instance",
                             placement + ",p3=1024", "--grid", "4", "--block", "256",
                             ELEMENTWISE)
    assert kernel["verdict"] == verdict
    assert kernel["decided_by"] == ("disjoint" if verdict == "idempotent" else "overlap")
    if clobbered is not None:
        assert kernel["clobbered"] == clobbered


def test_instance_of_aggregate_parameters_as_hex_bytes(capsys):
    def buf(pointer, n):
        return "hex:" + (pointer.to_bytes(8, "little") + n.to_bytes(4, "little")
                         + bytes(4)).hex()

    src, dst = 0x7F0000000000, 0x7F0000000800
    (kernel,) = _kernel_json(capsys, "--kernel", "scale_buf", "--instance",
                             f"p0={buf(src, 1024)},p1={buf(dst, 512)},p2=2.0",
                             "--grid", "4", "--block", "256", STRUCTS)
    assert kernel["verdict"] == "idempotent"  # only i < min(1024, 512) run
    (same,) = _kernel_json(capsys, "--kernel", "scale_buf", "--instance",
                           f"p0={buf(src, 1024)},p1={buf(src, 1024)},p2=2.0",
                           "--grid", "4", "--block", "256", STRUCTS)
    assert same["verdict"] != "idempotent"


@pytest.mark.parametrize("argv,message", [
    (["--instance", "p9=1"], "no parameter 'p9'"),
    (["--instance", "p0=zz,p1=0,p2=0,p3=1"], "malformed value for p0"),
    (["--instance", "p0=1,p1=2"], "no value for vec_add_param_2, vec_add_param_3"),
    (["--instance", "p0=1,p1=2,p2=3,p3=4", "--grid", "0"], "malformed --grid"),
    (["--instance", "p0=hex:00,p1=2,p2=3,p3=4"], "takes 8 bytes, got 1"),
])
def test_bad_instance_input_is_one_line_exit_2(capsys, argv, message):
    assert main(["analyze", "--kernel", "vec_add", *argv, ELEMENTWISE]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_instance_needs_a_kernel(capsys):
    assert main(["analyze", "--instance", "p0=1", ELEMENTWISE]) == 2
    assert "--instance needs --kernel" in capsys.readouterr().err


def test_sass_accesses_and_pointer_parameters(capsys):
    # The sm_90 cubin of vec_add: SASS accesses are classified by the SASS opcode (STG is a
    # write), and pointers are the 8-byte parameters that reach a memory operand's base.
    assert main(["analyze", "--json", "--kernel", "vec_add",
                 str(FIXTURES / "cubin/sm_90/elementwise.cubin")]) == 0
    module = json.loads(capsys.readouterr().out)["modules"][0]
    assert module["language"] == "sass"
    kernel = module["kernels"][0]
    assert [p["used_as_pointer"] for p in kernel["params"]] == [True, True, True, False]
    assert [(a["kind"], a["width"]) for a in kernel["accesses"]] == [
        ("read", 4), ("read", 4), ("write", 4)
    ]


def test_sass_atomics_are_named(capsys):
    assert main(["analyze", "--json", "--kernel", "atomic_add_all",
                 str(FIXTURES / "cubin/sm_80/atomics.cubin")]) == 0
    kernel = json.loads(capsys.readouterr().out)["modules"][0]["kernels"][0]
    atomics = [a for a in kernel["accesses"] if a["kind"] == "atomic"]
    assert atomics and {a["atomic_op"] for a in atomics} == {"add"}
