"""Many host threads launching at once: N threads x M launches of one kernel instance.

Usage: python threaded_client.py PTX KERNEL THREADS LAUNCHES
cuda-bindings releases the GIL around each driver call, so the launches reach the driver
(and the shim) concurrently. Meant for the stand-in driver's no-op launch mode.
"""

import sys
import threading

import numpy as np
from cuda.bindings import driver as cu


def ok(result):
    assert result[0] == cu.CUresult.CUDA_SUCCESS, result[0]
    return result[1] if len(result) == 2 else result[1:]


ptx, kernel, threads, launches = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3]), \
    int(sys.argv[4])
ok(cu.cuInit(0))
ctx = ok(cu.cuDevicePrimaryCtxRetain(ok(cu.cuDeviceGet(0))))
ok(cu.cuCtxSetCurrent(ctx))
f = ok(cu.cuModuleGetFunction(ok(cu.cuModuleLoadData(open(ptx, "rb").read() + b"\0")), kernel))
buf = int(ok(cu.cuMemAlloc(1 << 20)))
values = [np.array([buf], np.uint64), np.array([buf + 4096], np.uint64),
          np.array([buf + 8192], np.uint64), np.array([256], np.int32)]
params = np.array([v.ctypes.data for v in values], dtype=np.uint64)
errors = []


def worker():
    ok(cu.cuCtxSetCurrent(ctx))
    try:
        for _ in range(launches):
            ok(cu.cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, 0, params.ctypes.data, 0))
    except AssertionError as error:
        errors.append(error)


pool = [threading.Thread(target=worker) for _ in range(threads)]
for t in pool:
    t.start()
for t in pool:
    t.join()
sys.exit(1 if errors else 0)
