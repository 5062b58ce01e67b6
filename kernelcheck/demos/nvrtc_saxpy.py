"""Compile SAXPY with NVRTC and launch it through cuda.bindings, in place and out of place.

``y = a*x + y`` reads and writes ``y`` (not idempotent); ``z = a*x + y`` into a third buffer
is idempotent. Needs ``pip install 'kernelcheck[nvrtc]'``. Run it with
``kernelcheck run -- python -m kernelcheck.demos.nvrtc_saxpy``.
"""

from __future__ import annotations

import sys

import numpy as np

SOURCE = r"""
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out,
                                 unsigned long long n)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a * x[i] + y[i];
}
"""


def _check(result, what: str):
    status = result[0]
    if int(status) != 0:
        raise SystemExit(f"nvrtc_saxpy: {what} failed: {status!r}")
    return result[1] if len(result) == 2 else result[1:]


def compile_ptx(arch: str) -> bytes:
    """PTX of :data:`SOURCE` for ``arch`` (e.g. ``compute_90``), by NVRTC."""
    from cuda.bindings import nvrtc

    program = _check(nvrtc.nvrtcCreateProgram(SOURCE.encode(), b"saxpy.cu", 0, [], []),
                     "nvrtcCreateProgram")
    options = [f"--gpu-architecture={arch}".encode()]
    status = nvrtc.nvrtcCompileProgram(program, len(options), options)[0]
    if int(status) != 0:
        size = _check(nvrtc.nvrtcGetProgramLogSize(program), "nvrtcGetProgramLogSize")
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(program, log)
        raise SystemExit(f"nvrtc_saxpy: compilation failed:\n{log.decode(errors='replace')}")
    size = _check(nvrtc.nvrtcGetPTXSize(program), "nvrtcGetPTXSize")
    ptx = b" " * size
    _check(nvrtc.nvrtcGetPTX(program, ptx), "nvrtcGetPTX")
    return ptx


def main() -> int:
    """Compile, run both launches and check the results; returns the exit status."""
    from cuda.bindings import driver as cu

    _check(cu.cuInit(0), "cuInit")
    device = _check(cu.cuDeviceGet(0), "cuDeviceGet")
    major = _check(cu.cuDeviceGetAttribute(
        cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device), "attr")
    minor = _check(cu.cuDeviceGetAttribute(
        cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device), "attr")
    ptx = compile_ptx(f"compute_{major}{minor}")
    _check(cu.cuCtxSetCurrent(_check(cu.cuDevicePrimaryCtxRetain(device), "ctx")), "ctx")
    module = _check(cu.cuModuleLoadData(ptx.rstrip(b"\0") + b"\0"), "cuModuleLoadData")
    saxpy = _check(cu.cuModuleGetFunction(module, b"saxpy"), "cuModuleGetFunction")
    n = 512
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, dtype=np.float32)
    dx, dy, dz = (_check(cu.cuMemAlloc(4 * n), "cuMemAlloc") for _ in range(3))
    _check(cu.cuMemcpyHtoD(dx, x.ctypes.data, 4 * n), "copy")
    _check(cu.cuMemcpyHtoD(dy, y.ctypes.data, 4 * n), "copy")
    for out in (dz, dy):  # z = 2x + y, then y = 2x + y in place
        args = [np.array([2.0], np.float32), np.array([int(dx)], np.uint64),
                np.array([int(dy)], np.uint64), np.array([int(out)], np.uint64),
                np.array([n], np.uint64)]
        pointers = np.array([a.ctypes.data for a in args], np.uint64)
        _check(cu.cuLaunchKernel(saxpy, (n + 127) // 128, 1, 1, 128, 1, 1, 0, 0,
                                 pointers.ctypes.data, 0), "cuLaunchKernel")
    _check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
    z, y_after = np.empty(n, np.float32), np.empty(n, np.float32)
    _check(cu.cuMemcpyDtoH(z.ctypes.data, dz, 4 * n), "copy")
    _check(cu.cuMemcpyDtoH(y_after.ctypes.data, dy, 4 * n), "copy")
    if not (np.array_equal(z, 2 * x + y) and np.array_equal(y_after, 2 * x + y)):
        print("nvrtc_saxpy: wrong results", file=sys.stderr)
        return 1
    print(f"nvrtc_saxpy: {n} elements, both launches correct")
    return 0


if __name__ == "__main__":
    sys.exit(main())
