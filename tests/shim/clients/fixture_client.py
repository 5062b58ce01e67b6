"""A cuda-python program (cuda.bindings.driver) that launches fixture kernel instances.

Usage: python fixture_client.py SPEC.json OUT.json

SPEC lists launches: {"ptx": path, "kernel": name, "params": hex buffer, "layout": [[offset,
size], ...], "grid": [x, y, z], "block": [x, y, z], "form": "params" | "extra" | "ex" |
"library" | "coop", "repeat": n, "sleep": seconds between repeats}. The program allocates one
32 MiB buffer first (on the stand-in driver it starts at 0x7f0000000000, the base the
fixture instances' pointers assume), fills it with a fixed pattern, runs every launch, and
writes the SHA-256 of the final buffer to OUT, so a run under `kernelcheck run` can be
compared with a plain run.
"""

import hashlib
import json
import sys
import time

import numpy as np
from cuda.bindings import driver as cu

BUFFER = 32 << 20


def ok(result):
    status = result[0]
    if status != cu.CUresult.CUDA_SUCCESS:
        raise SystemExit(f"driver call failed: {cu.cuGetErrorName(status)[1]}")
    return result[1] if len(result) == 2 else result[1:]


def main():
    spec = json.load(open(sys.argv[1]))
    ok(cu.cuInit(0))
    ok(cu.cuCtxSetCurrent(ok(cu.cuDevicePrimaryCtxRetain(ok(cu.cuDeviceGet(0))))))
    base = int(ok(cu.cuMemAlloc(BUFFER)))
    if base != 0x7F0000000000:
        raise SystemExit(f"first allocation at {base:#x}, not 0x7f0000000000")
    pattern = (np.arange(BUFFER // 4, dtype=np.uint32) % 1000).astype(np.float32) * 0.5
    ok(cu.cuMemcpyHtoD(base, pattern.ctypes.data, BUFFER))
    stream = ok(cu.cuStreamCreate(0))
    modules, functions = {}, {}
    for launch in spec["launches"]:
        library = launch["form"] == "library"
        key = (launch["ptx"], library)
        if key not in modules:
            image = open(launch["ptx"], "rb").read() + b"\0"
            modules[key] = ok(cu.cuLibraryLoadData(image, None, None, 0, None, None, 0)) \
                if library else ok(cu.cuModuleLoadData(image))
        fkey = key + (launch["kernel"],)
        if fkey not in functions:
            name = launch["kernel"].encode()
            if library:
                kernel = ok(cu.cuLibraryGetKernel(modules[key], name))
                functions[fkey] = cu.CUfunction(int(kernel))
            else:
                functions[fkey] = ok(cu.cuModuleGetFunction(modules[key], name))
        f = functions[fkey]
        raw = bytes.fromhex(launch["params"])
        buf = np.frombuffer(raw + bytes(8), dtype=np.uint8).copy()
        values = [buf[o:o + s].copy() for o, s in launch["layout"]]
        params = np.array([v.ctypes.data for v in values] or [0], dtype=np.uint64)
        size = np.array([len(raw)], dtype=np.uint64)
        extra = np.array([1, buf.ctypes.data, 2, size.ctypes.data, 0], dtype=np.uint64)
        (gx, gy, gz), (bx, by, bz) = launch["grid"], launch["block"]
        for k in range(launch.get("repeat", 1)):
            if k:
                time.sleep(launch.get("sleep", 0))
            form = launch["form"]
            if form in ("params", "library"):
                ok(cu.cuLaunchKernel(f, gx, gy, gz, bx, by, bz, 0, stream, params.ctypes.data,
                                     0))
            elif form == "extra":
                ok(cu.cuLaunchKernel(f, gx, gy, gz, bx, by, bz, 0, stream, 0,
                                     extra.ctypes.data))
            elif form == "coop":
                ok(cu.cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, 0, stream,
                                                params.ctypes.data))
            else:
                config = cu.CUlaunchConfig()
                config.gridDimX, config.gridDimY, config.gridDimZ = gx, gy, gz
                config.blockDimX, config.blockDimY, config.blockDimZ = bx, by, bz
                config.sharedMemBytes = 0
                config.hStream = stream
                config.numAttrs = 0
                ok(cu.cuLaunchKernelEx(config, f, params.ctypes.data, 0))
    ok(cu.cuStreamSynchronize(stream))
    out = np.empty(BUFFER, dtype=np.uint8)
    ok(cu.cuMemcpyDtoH(out.ctypes.data, base, BUFFER))
    json.dump({"sha256": hashlib.sha256(out.tobytes()).hexdigest()}, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
