"""Kills the analysis helper of its `kernelcheck run` mid-run, then keeps working.

Usage: python kill_helper_client.py PTX_BEFORE PTX_AFTER
Loads and launches vec_add-like kernels from PTX_BEFORE, SIGKILLs the helper (a sibling
process running kernelcheck.shim.helper), loads PTX_AFTER and launches again, and checks the
results computed on the device.
"""

import os
import signal
import sys
from pathlib import Path

import numpy as np
from cuda.bindings import driver as cu


def ok(result):
    assert result[0] == cu.CUresult.CUDA_SUCCESS, result[0]
    return result[1] if len(result) == 2 else result[1:]


def helper_pids():
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if b"kernelcheck.shim.helper" in cmd and int(stat[1]) == os.getppid():
            yield int(proc.name)


def vec_add(path):
    f = ok(cu.cuModuleGetFunction(ok(cu.cuModuleLoadData(open(path, "rb").read() + b"\0")),
                                  b"vec_add"))
    n = 100
    a = np.arange(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    da, dout = ok(cu.cuMemAlloc(400)), ok(cu.cuMemAlloc(400))
    ok(cu.cuMemcpyHtoD(da, a.ctypes.data, 400))
    values = [np.array([int(dout)], np.uint64), np.array([int(da)], np.uint64),
              np.array([int(da)], np.uint64), np.array([n], np.int32)]
    params = np.array([v.ctypes.data for v in values], dtype=np.uint64)
    ok(cu.cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, 0, params.ctypes.data, 0))
    ok(cu.cuMemcpyDtoH(out.ctypes.data, dout, 400))
    assert (out == 2 * a).all()


ok(cu.cuInit(0))
ok(cu.cuCtxSetCurrent(ok(cu.cuDevicePrimaryCtxRetain(ok(cu.cuDeviceGet(0))))))
vec_add(sys.argv[1])
killed = list(helper_pids())
assert killed, "no helper process found"
for pid in killed:
    os.kill(pid, signal.SIGKILL)
vec_add(sys.argv[2])
print("survived", len(killed))
