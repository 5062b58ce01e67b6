"""Launch ``vec_add`` from the bundled ``elementwise.ptx`` through cuda.bindings, twice.

The first launch writes ``out = a + b`` (idempotent: ``out`` overlaps neither input); the
second writes ``a = a + b`` in place (not idempotent: each thread reads ``a[i]`` and then
writes it). Run it with ``kernelcheck run -- python -m kernelcheck.demos.vector_add``.
"""

from __future__ import annotations

import sys
from importlib import resources

import numpy as np


def _ok(result):
    from cuda.bindings import driver as cu

    status = result[0]
    if status != cu.CUresult.CUDA_SUCCESS:
        raise SystemExit(f"vector_add: driver call failed: {cu.cuGetErrorName(status)[1]}")
    return result[1] if len(result) == 2 else result[1:]


def main() -> int:
    """Run both launches and check the results; returns the exit status."""
    from cuda.bindings import driver as cu

    ptx = (resources.files("kernelcheck") / "examples" / "elementwise.ptx").read_bytes()
    _ok(cu.cuInit(0))
    context = _ok(cu.cuDevicePrimaryCtxRetain(_ok(cu.cuDeviceGet(0))))
    _ok(cu.cuCtxSetCurrent(context))
    module = _ok(cu.cuModuleLoadData(ptx + b"\0"))
    vec_add = _ok(cu.cuModuleGetFunction(module, b"vec_add"))
    n = 1024
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 0.5, dtype=np.float32)
    da, db, dout = (_ok(cu.cuMemAlloc(4 * n)) for _ in range(3))
    _ok(cu.cuMemcpyHtoD(da, a.ctypes.data, 4 * n))
    _ok(cu.cuMemcpyHtoD(db, b.ctypes.data, 4 * n))
    for out in (dout, da):
        args = [np.array([int(out)], np.uint64), np.array([int(da)], np.uint64),
                np.array([int(db)], np.uint64), np.array([n], np.int32)]
        pointers = np.array([x.ctypes.data for x in args], np.uint64)
        _ok(cu.cuLaunchKernel(vec_add, (n + 255) // 256, 1, 1, 256, 1, 1, 0, 0,
                              pointers.ctypes.data, 0))
    _ok(cu.cuCtxSynchronize())
    got_out, got_a = np.empty(n, np.float32), np.empty(n, np.float32)
    _ok(cu.cuMemcpyDtoH(got_out.ctypes.data, dout, 4 * n))
    _ok(cu.cuMemcpyDtoH(got_a.ctypes.data, da, 4 * n))
    if not (np.array_equal(got_out, a + b) and np.array_equal(got_a, a + b)):
        print("vector_add: wrong results", file=sys.stderr)
        return 1
    print(f"vector_add: {n} elements, both launches correct")
    return 0


if __name__ == "__main__":
    sys.exit(main())
