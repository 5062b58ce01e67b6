"""The GPU backend, run through cuda-bindings on the stand-in libcuda.so.1, and the diff.

The stand-in driver executes kernels on the emulator, so these tests check the backend's
driver calls (module loading, allocation, parameter passing, dynamic shared memory, copies
back), not the GPU's arithmetic; on a machine with a GPU, ``--backend both`` compares the two.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from kernelcheck.launchfile import Mismatch, diff_outputs
from kernelcheck.shim.build import ShimBuildError

try:
    from kernelcheck.standin import standin_environment
    ENV = standin_environment()
except ShimBuildError as error:  # pragma: no cover - no compiler on this machine
    pytest.skip(f"stand-in driver cannot be built: {error}", allow_module_level=True)

PTX = textwrap.dedent("""\
    .version 8.0
    .target sm_90
    .address_size 64
    .extern .shared .align 4 .b8 dyn[];
    .visible .entry reverse(.param .u64 out, .param .u64 in, .param .f32 scale)
    {
      .reg .b32 %r<8>; .reg .f32 %f<4>; .reg .b64 %rd<8>;
      ld.param.u64 %rd1, [out];
      ld.param.u64 %rd2, [in];
      ld.param.f32 %f1, [scale];
      mov.u32 %r1, %tid.x;
      mov.u32 %r2, %ntid.x;
      mul.wide.u32 %rd3, %r1, 4;
      add.s64 %rd4, %rd2, %rd3;
      ld.global.f32 %f2, [%rd4];
      mul.rn.f32 %f3, %f2, %f1;
      shl.b32 %r3, %r1, 2;
      mov.u32 %r4, dyn;
      add.u32 %r5, %r4, %r3;
      st.shared.f32 [%r5], %f3;
      bar.sync 0;
      sub.u32 %r6, %r2, %r1;
      sub.u32 %r6, %r6, 1;
      shl.b32 %r6, %r6, 2;
      add.u32 %r6, %r4, %r6;
      ld.shared.f32 %f3, [%r6];
      add.s64 %rd5, %rd1, %rd3;
      st.global.f32 [%rd5], %f3;
      ret;
    }
""")

LAUNCH = {
    "format": "kernelcheck-launch", "version": 1, "block": [4], "shared_bytes": 16,
    "buffers": {"in": {"type": "f32", "values": [1, 2, 3, "-inf"]},
                "out": {"type": "f32", "count": 4}},
    "params": [{"buffer": "out"}, {"buffer": "in"}, {"value": 0.5}],
    "outputs": ["out"],
    "expect": {"out": {"values": ["-inf", 1.5, 1.0, 0.5]}},
}


def _emulate(tmp_path, *args):
    (tmp_path / "k.ptx").write_text(PTX)
    (tmp_path / "l.json").write_text(json.dumps(LAUNCH))
    return subprocess.run([sys.executable, "-m", "kernelcheck.cli", "emulate",
                           str(tmp_path / "k.ptx"), "--launch", str(tmp_path / "l.json"),
                           *args], env=ENV, capture_output=True, text=True, timeout=120)


def test_gpu_backend_runs_through_the_driver_api(tmp_path):
    done = _emulate(tmp_path, "--backend", "gpu", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["backend"] == "gpu"
    assert document["outputs"]["out"]["values"] == ["-inf", 1.5, 1.0, 0.5]
    assert document["expectations"] == {"out": True}


def test_both_backends_agree(tmp_path):
    done = _emulate(tmp_path, "--backend", "both")
    assert done.returncode == 0, done.stderr
    assert "emulator and GPU agree" in done.stdout


def test_no_driver_is_one_line(tmp_path):
    env = {k: v for k, v in ENV.items() if k != "LD_LIBRARY_PATH"}
    env["LD_LIBRARY_PATH"] = str(tmp_path)  # nowhere a libcuda.so.1 lives
    done = _emulate(tmp_path, "--backend", "gpu")
    done = subprocess.run(done.args, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode == 0:  # pragma: no cover - a real driver is installed system-wide
        pytest.skip("a CUDA driver is installed on this machine")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kernelcheck: error: no CUDA driver")


def test_diff_reports_every_differing_element():
    first = {"o": bytes.fromhex("0000803f" "00000040")}
    second = {"o": bytes.fromhex("0000803f" "01000040")}
    (difference,) = diff_outputs(first, second, {"o": "f32"})
    assert difference == Mismatch("o", 1, 4, "2.0 (0x40000000)",
                                  "2.0000002 (0x40000001)")
    assert diff_outputs(first, first, {"o": None}) == []
