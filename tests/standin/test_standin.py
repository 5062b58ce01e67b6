"""The stand-in libcuda.so.1: a cuda-python program runs on it and gets the right answers."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernelcheck.shim.build import ShimBuildError

try:
    from kernelcheck.standin import standin_environment
    ENV = standin_environment()
except ShimBuildError as error:  # pragma: no cover - no compiler on this machine
    pytest.skip(f"stand-in driver cannot be built: {error}", allow_module_level=True)

PTX = Path(__file__).resolve().parents[2] / "fixtures" / "ptx" / "sm_90" / "elementwise.ptx"

PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    from cuda.bindings import driver as cu

    def ok(result):
        assert result[0] == cu.CUresult.CUDA_SUCCESS, result[0]
        return result[1] if len(result) == 2 else result[1:]

    ok(cu.cuInit(0))
    dev = ok(cu.cuDeviceGet(0))
    print(ok(cu.cuDeviceGetName(64, dev)).rstrip(b" \\0").decode())
    ok(cu.cuCtxSetCurrent(ok(cu.cuDevicePrimaryCtxRetain(dev))))
    mod = ok(cu.cuModuleLoadData(open(sys.argv[1], "rb").read() + b"\\0"))
    kernel = ok(cu.cuModuleGetFunction(mod, b"vec_add"))
    n = 300
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 0.5, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    da, db, dout = (ok(cu.cuMemAlloc(x.nbytes)) for x in (a, b, out))
    ok(cu.cuMemcpyHtoD(da, a.ctypes.data, a.nbytes))
    ok(cu.cuMemcpyHtoD(db, b.ctypes.data, b.nbytes))
    ok(cu.cuMemsetD32(dout, 0x7fc00000, n))
    values = [np.array([int(p)], np.uint64) for p in (dout, da, db)] + [np.array([n], np.int32)]
    params = np.array([v.ctypes.data for v in values], dtype=np.uint64)
    stream = ok(cu.cuStreamCreate(0))
    ok(cu.cuLaunchKernel(kernel, 2, 1, 1, 256, 1, 1, 0, stream, params.ctypes.data, 0))
    ok(cu.cuStreamSynchronize(stream))
    ok(cu.cuMemcpyDtoH(out.ctypes.data, dout, out.nbytes))
    assert (out == a + b).all(), out[:8]
    status = cu.cuLaunchKernel(kernel, 1, 1, 1, 2048, 1, 1, 0, stream, params.ctypes.data, 0)
    print(cu.cuGetErrorName(status[0])[1].decode())
    print("ok")
""")


def test_cuda_python_program_runs_on_the_emulator(tmp_path):
    script = tmp_path / "client.py"
    script.write_text(PROGRAM)
    done = subprocess.run([sys.executable, str(script), str(PTX)],
                          env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "ok"
    assert "stand-in" in done.stdout
    assert "CUDA_ERROR_INVALID_VALUE" in done.stdout  # 2048 threads per block is refused


def test_entry_points_are_bound_inside_the_library():
    """A preloaded library must not capture the stand-in's own internal calls."""
    from kernelcheck.shim.build import standin_library

    dynamic = subprocess.run(["readelf", "-d", str(standin_library())], capture_output=True,
                             text=True).stdout
    assert "SYMBOLIC" in dynamic
