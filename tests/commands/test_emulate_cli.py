"""`kernelcheck emulate`: outputs printed or saved, expectations, one-line errors, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from kernelcheck.cli import main

PTX = textwrap.dedent("""\
    .version 8.0
    .target sm_90
    .address_size 64

    .visible .entry wide_add(.param .u64 out, .param .u64 a, .param .u32 bias)
    {
      .reg .b32 %r<8>; .reg .b64 %rd<8>;
      ld.param.u64 %rd1, [out];
      ld.param.u64 %rd2, [a];
      ld.param.u32 %r1, [bias];
      mov.u32 %r2, %tid.x;
      mul.wide.u32 %rd3, %r2, 4;
      add.s64 %rd4, %rd2, %rd3;
      ld.global.u32 %r3, [%rd4];
      add.cc.u32 %r4, %r3, %r1;
      addc.u32 %r5, 0, 0;
      mul.wide.u32 %rd5, %r2, 8;
      add.s64 %rd6, %rd1, %rd5;
      st.global.v2.u32 [%rd6], {%r4, %r5};
      ret;
    }

    .visible .entry faults(.param .u64 out)
    {
      .reg .b64 %rd<2>;
      mov.u64 %rd1, 16;
      st.global.u32 [%rd1], 1;
      ret;
    }
""")

#: The emulator compiles a whole module when it loads it, so the kernel using an instruction it
#: lacks lives in a file of its own.
PTX_LACKING = textwrap.dedent("""\
    .version 8.0
    .target sm_90
    .address_size 64
    .visible .entry lacks(.param .u64 out)
    {
      .reg .b32 %r<4>; .reg .b64 %rd<2>;
      ld.param.u64 %rd1, [out];
      mov.u32 %r1, 3;
          bogus.op.u32 %r2, %r1;
      st.global.u32 [%rd1], %r2;
      ret;
    }
""")

LAUNCH = {
    "format": "kernelcheck-launch", "version": 1, "kernel": "wide_add", "block": [3],
    "buffers": {"a": {"type": "u32", "values": [1, "0xffffffff", "0xfffffffe"]},
                "out": {"type": "u32", "count": 6, "fill": 170}},
    "params": [{"buffer": "out"}, {"buffer": "a"}, {"type": "u32", "value": 2}],
    "outputs": ["out"],
    "expect": {"out": {"values": [3, 0, 1, 1, 0, 1]}},
}


@pytest.fixture
def files(tmp_path):
    ptx = tmp_path / "k.ptx"
    ptx.write_text(PTX)

    def write(document, name="launch.json"):
        path = tmp_path / name
        path.write_text(json.dumps(document))
        return str(path)

    return str(ptx), write


def test_runs_and_prints_typed_outputs(files, capsys):
    ptx, write = files
    assert main(["emulate", ptx, "--launch", write(LAUNCH)]) == 0
    out = capsys.readouterr().out
    assert "kernel wide_add on the emulator: grid 1x1x1, block 3x1x1" in out
    assert "out (24 bytes, u32 x 6):\n  [0] 3 0 1 1 0 1\n" in out
    assert "expect out: as expected" in out


def test_hex_format_and_json(files, capsys):
    ptx, write = files
    assert main(["emulate", ptx, "--launch", write(LAUNCH), "--format", "hex"]) == 0
    assert "  000000: 03 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00\n" in capsys.readouterr().out
    assert main(["emulate", ptx, "--launch", write(LAUNCH), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["outputs"]["out"]["values"] == [3, 0, 1, 1, 0, 1]
    assert document["expectations"] == {"out": True}


def test_a_failed_expectation_is_exit_1_and_names_the_element(files, capsys):
    ptx, write = files
    wrong = {**LAUNCH, "expect": {"out": {"values": [3, 0, 1, 0, 0, 1]}}}
    assert main(["emulate", ptx, "--launch", write(wrong)]) == 1
    out = capsys.readouterr().out
    assert "expect out: 1 elements differ" in out
    assert "out[3] (byte 12): expected 0 (0x00000000), found 1 (0x00000001)" in out


def test_saves_npy_and_bin(files, tmp_path, capsys):
    ptx, write = files
    untyped = {**LAUNCH, "outputs": ["out", {"buffer": "a"}], "expect": {}}
    untyped["buffers"] = {**LAUNCH["buffers"], "a": {"hex": "01000000ffffffff" "feffffff"}}
    assert main(["emulate", ptx, "--launch", write(untyped), "-o", str(tmp_path / "o")]) == 0
    assert np.load(tmp_path / "o" / "out.npy").tolist() == [3, 0, 1, 1, 0, 1]
    assert (tmp_path / "o" / "a.bin").read_bytes() == bytes.fromhex("01000000ffffffff"
                                                                     "feffffff")
    assert "saved " in capsys.readouterr().out


def test_unsupported_instruction_is_located(files, tmp_path, capsys):
    _, write = files
    ptx = tmp_path / "lacking.ptx"
    ptx.write_text(PTX_LACKING)
    launch = {**LAUNCH, "kernel": "lacks", "buffers": {"out": {"size": 4}},
              "params": [{"buffer": "out"}], "outputs": ["out"], "expect": {}}
    status = main(["emulate", str(ptx), "--launch", write(launch)])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert err.startswith(f"kernelcheck: error: {ptx}:9:7: unsupported: instruction "
                          f"'bogus.op.u32'")
    assert "\n" not in err


def test_a_memory_fault_is_exit_1(files, capsys):
    ptx, write = files
    launch = {**LAUNCH, "kernel": "faults", "buffers": {"out": {"size": 4}},
              "params": [{"buffer": "out"}], "outputs": ["out"], "expect": {}}
    assert main(["emulate", ptx, "--launch", write(launch)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("kernelcheck: error: ") and "failed on the emulator" in err
    assert "\n" not in err


@pytest.mark.parametrize("change, message", [
    ({"kernel": "nope"}, "no kernel named 'nope' (kernels: wide_add, faults)"),
    ({"kernel": None}, "holds 2 kernels (wide_add, faults)"),
    ({"params": [{"buffer": "out"}]}, "params: kernel wide_add takes 3 parameters "
     "(out, a, bias), the launch file gives 1"),
    ({"params": [{"buffer": "out"}, {"buffer": "a"}, {"type": "u64", "value": 2}]},
     "params[2]: parameter bias is .u32 (4 bytes) but the value is u64 (8 bytes)"),
    ({"params": {"out": {"buffer": "out"}, "a": {"buffer": "a"}}},
     "params: no value for parameter bias of kernel wide_add"),
    ({"params": [{"buffer": "out", "name": "a"}, {"buffer": "a"}, {"value": 1}]},
     "params[0]: named 'a' but the kernel's parameter is out"),
])
def test_bad_launches_are_one_line_exit_2(files, capsys, change, message):
    ptx, write = files
    document = {k: v for k, v in {**LAUNCH, **change}.items() if v is not None}
    assert main(["emulate", ptx, "--launch", write(document)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kernelcheck: error: ") and message in err and "\n" not in err


def test_malformed_ptx_and_missing_files_are_one_line(files, tmp_path, capsys):
    ptx, write = files
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k( {\n}\n")
    assert main(["emulate", str(bad), "--launch", write(LAUNCH)]) == 2
    assert f"{bad}:4:" in capsys.readouterr().err
    assert main(["emulate", ptx, "--launch", str(tmp_path / "none.json")]) == 2
    assert "cannot read launch file" in capsys.readouterr().err


def test_step_limit_stops_a_kernel_that_never_ends(tmp_path, capsys):
    ptx = tmp_path / "loop.ptx"
    ptx.write_text(".version 8.0\n.target sm_90\n.address_size 64\n"
                   ".visible .entry spin()\n{\nL: bra L;\n}\n")
    launch = tmp_path / "l.json"
    launch.write_text(json.dumps({"format": "kernelcheck-launch", "version": 1, "block": [1]}))
    assert main(["emulate", str(ptx), "--launch", str(launch), "--step-limit", "1000"]) == 1
    assert "did not finish within 1000 steps" in capsys.readouterr().err


def test_the_installed_command_runs(files):
    ptx, write = files
    done = subprocess.run([sys.executable, "-m", "kernelcheck.cli", "emulate", ptx,
                           "--launch", write(LAUNCH)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "expect out: as expected" in done.stdout
