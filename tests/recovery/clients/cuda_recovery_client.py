"""A cuda-python program run by tests/recovery/test_cuda_device.py on the stand-in driver:
vec_add then inplace_add_one through a RecoverySession over a CudaDevice, or the same two
launches without recovery (argument ``plain``). Prints one JSON line."""

import json
import sys
from pathlib import Path

import numpy as np

from kernelcheck.recovery import DeviceError, RecoveryConfig, RecoverySession
from kernelcheck.recovery.cuda_device import CudaDevice

PTX = Path(__file__).resolve().parents[3] / "fixtures" / "ptx" / "sm_80"
N = 1024

device = CudaDevice()
a, b, out = (device.alloc(4 * N) for _ in range(3))
device.copy_htod(a, np.arange(N, dtype=np.float32).tobytes())
device.copy_htod(b, np.full(N, 0.5, dtype=np.float32).tobytes())
expected = (np.arange(N, dtype=np.float32) + np.float32(0.5) + np.float32(1)).tobytes()
session = RecoverySession(device, RecoveryConfig(redundant="off"))
add = session.load_module((PTX / "elementwise.ptx").read_text())
inc = session.load_module((PTX / "inplace.ptx").read_text())
result = {}
if sys.argv[1:] == ["plain"]:
    from kernelcheck.emu.emulator import pack_params
    try:
        for m, k, p in ((add, "vec_add", [out, a, b, N]), (inc, "inplace_add_one", [out, N])):
            raw = pack_params(m.function(k), p).tobytes()
            device.launch(m.handle, k, (N // 256,), (256,), raw)
    except DeviceError as err:
        result["error"] = err.kind
else:
    session.launch(add, "vec_add", grid=(N // 256,), block=(256,), params=[out, a, b, N])
    session.launch(inc, "inplace_add_one", grid=(N // 256,), block=(256,), params=[out, N])
    report = session.synchronize()
    result.update(report.to_json())
result["golden"] = device.copy_dtoh(out, 4 * N) == expected
result["allocations"] = len(device.allocations())
print(json.dumps(result))
