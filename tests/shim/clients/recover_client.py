"""A cuda-python program for recovery tests: fixture kernels launched on one stream.

Usage: python recover_client.py OUT.json STEP [STEP ...]

Steps: ``vec_add`` (c = a + b, idempotent), ``inplace`` (a += 1 in place, not idempotent:
clobbered = a), ``atomic`` (atomicAdd of b into s, not idempotent), ``sync`` (synchronize
the stream), ``ctxsync`` (synchronize the context). The stream is synchronized at the end
and OUT receives the final contents of every buffer (hex of each float32 array's bytes),
or ``{"error": NAME}`` when a driver call fails (exit status 3).
"""

import json
import sys
from pathlib import Path

import numpy as np
from cuda.bindings import driver as cu

PTX = Path(__file__).resolve().parents[3] / "fixtures" / "ptx" / "sm_90"
N = 1024


class DriverError(Exception):
    pass


def ok(result):
    status = result[0]
    if status != cu.CUresult.CUDA_SUCCESS:
        raise DriverError(cu.cuGetErrorName(status)[1].decode())
    return result[1] if len(result) == 2 else result[1:]


def function(path, name):
    module = ok(cu.cuModuleLoadData((PTX / path).read_bytes() + b"\0"))
    return ok(cu.cuModuleGetFunction(module, name.encode()))


def main():
    out_path, steps = sys.argv[1], sys.argv[2:]
    ok(cu.cuInit(0))
    ok(cu.cuCtxSetCurrent(ok(cu.cuDevicePrimaryCtxRetain(ok(cu.cuDeviceGet(0))))))
    host = {"a": np.arange(N, dtype=np.float32), "b": np.full(N, 2.0, dtype=np.float32),
            "c": np.zeros(N, dtype=np.float32), "s": np.zeros(1, dtype=np.float32)}
    dev = {}
    for name, array in host.items():
        dev[name] = int(ok(cu.cuMemAlloc(array.nbytes)))
        ok(cu.cuMemcpyHtoD(dev[name], array.ctypes.data, array.nbytes))
    stream = ok(cu.cuStreamCreate(0))
    kernels = {"vec_add": (function("elementwise.ptx", "vec_add"), ("c", "a", "b")),
               "inplace": (function("inplace.ptx", "inplace_add_one"), ("a",)),
               "atomic": (function("atomics.ptx", "atomic_add_all"), ("s", "b"))}
    try:
        for step in steps:
            if step == "sync":
                ok(cu.cuStreamSynchronize(stream))
                continue
            if step == "ctxsync":
                ok(cu.cuCtxSynchronize())
                continue
            f, buffers = kernels[step]
            values = [np.array([dev[b]], dtype=np.uint64) for b in buffers]
            values.append(np.array([N], dtype=np.uint32))
            params = np.array([v.ctypes.data for v in values], dtype=np.uint64)
            ok(cu.cuLaunchKernel(f, N // 256, 1, 1, 256, 1, 1, 0, stream, params.ctypes.data,
                                 0))
        ok(cu.cuStreamSynchronize(stream))
    except DriverError as error:
        Path(out_path).write_text(json.dumps({"error": str(error)}))
        sys.exit(3)
    result = {}
    for name, array in host.items():
        back = np.empty_like(array)
        ok(cu.cuMemcpyDtoH(back.ctypes.data, dev[name], back.nbytes))
        result[name] = back.tobytes().hex()
    Path(out_path).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
