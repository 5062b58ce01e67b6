#!/usr/bin/env bash
# Launch-time validation on a machine with an NVIDIA GPU (never run by CI).
#
# Builds the shim, runs a small PyTorch program (elementwise, in-place, reduction, matmul)
# and a cuda-python program plainly and under `kernelcheck run`, checks that the results
# are identical, prints the verdict summaries, and measures the cost the shim adds to a
# launch (100k launches of an empty kernel, plain vs under the shim). Finishes in a few
# minutes; prints a short table last. Needs: the NVIDIA driver, Python with kernelcheck
# installed (pip install -e .), torch for the PyTorch part (skipped without it), gcc.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export KERNELCHECK_CACHE_DIR="$WORK/cache"
mkdir -m 700 "$KERNELCHECK_CACHE_DIR"

echo "== building the shim"
$PY -c "from kernelcheck.shim.build import preload_library as p; print(p())"

cat > "$WORK/torch_prog.py" <<'PYEOF'
import hashlib, sys, torch
torch.manual_seed(0)
a = torch.randn(1 << 16, device="cuda"); b = torch.randn(1 << 16, device="cuda")
c = a * 2 + b                      # elementwise
c.add_(1.0)                        # in place
s = c.sum()                        # reduction
m = torch.randn(256, 256, device="cuda") @ torch.randn(256, 256, device="cuda")  # matmul
torch.cuda.synchronize()
out = torch.cat([c, s.reshape(1), m.flatten()]).cpu().numpy().tobytes()
print(hashlib.sha256(out).hexdigest())
PYEOF

cat > "$WORK/bench_prog.py" <<'PYEOF'
import sys, time
import numpy as np
from cuda.bindings import driver as cu, nvrtc
def ok(r):
    assert r[0] in (cu.CUresult.CUDA_SUCCESS, nvrtc.nvrtcResult.NVRTC_SUCCESS), r[0]
    return r[1] if len(r) == 2 else r[1:]
ok(cu.cuInit(0)); dev = ok(cu.cuDeviceGet(0))
ok(cu.cuCtxSetCurrent(ok(cu.cuDevicePrimaryCtxRetain(dev))))
major = ok(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
minor = ok(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
src = b'extern "C" __global__ void empty() {} extern "C" __global__ void axpy(float *y, const float *x, float a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }'
prog = ok(nvrtc.nvrtcCreateProgram(src, b"k.cu", 0, [], []))
ok(nvrtc.nvrtcCompileProgram(prog, 1, [f"--gpu-architecture=compute_{major}{minor}".encode()]))
ptx = b" " * ok(nvrtc.nvrtcGetPTXSize(prog)); ok(nvrtc.nvrtcGetPTX(prog, ptx))
mod = ok(cu.cuModuleLoadData(ptx))
empty = ok(cu.cuModuleGetFunction(mod, b"empty")); axpy = ok(cu.cuModuleGetFunction(mod, b"axpy"))
n = 1 << 20
x = np.arange(n, dtype=np.float32); y = np.ones(n, dtype=np.float32)
dx, dy = ok(cu.cuMemAlloc(4 * n)), ok(cu.cuMemAlloc(4 * n))
ok(cu.cuMemcpyHtoD(dx, x.ctypes.data, 4 * n)); ok(cu.cuMemcpyHtoD(dy, y.ctypes.data, 4 * n))
vals = [np.array([int(dy)], np.uint64), np.array([int(dx)], np.uint64), np.array([2.0], np.float32), np.array([n], np.int32)]
params = np.array([v.ctypes.data for v in vals], dtype=np.uint64)
for _ in range(10):  # in-place axpy: y is read then written (not idempotent)
    ok(cu.cuLaunchKernel(axpy, n // 256, 1, 1, 256, 1, 1, 0, 0, params.ctypes.data, 0))
ok(cu.cuCtxSynchronize())
ok(cu.cuMemcpyDtoH(y.ctypes.data, dy, 4 * n))
print("result", float(y.sum()))
if len(sys.argv) > 1:
    launches = int(sys.argv[1])
    ok(cu.cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0)); ok(cu.cuCtxSynchronize())
    t0 = time.perf_counter()
    for _ in range(launches):
        cu.cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0)
    ok(cu.cuCtxSynchronize())
    print("ns_per_launch", (time.perf_counter() - t0) / launches * 1e9)
PYEOF

RESULTS=()
if $PY -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "== PyTorch program"
  plain=$($PY "$WORK/torch_prog.py")
  shim=$($PY -m kernelcheck.cli run --report "$WORK/torch.json" -- $PY "$WORK/torch_prog.py")
  [ "$plain" = "$shim" ] && RESULTS+=("pytorch results equal|yes") || RESULTS+=("pytorch results equal|NO")
else
  RESULTS+=("pytorch|skipped (no torch with CUDA)")
fi

echo "== cuda-python program"
plain=$($PY "$WORK/bench_prog.py" | grep result)
shim=$($PY -m kernelcheck.cli run --report "$WORK/cp.json" -- $PY "$WORK/bench_prog.py" | grep result)
[ "$plain" = "$shim" ] && RESULTS+=("cuda-python results equal|yes") || RESULTS+=("cuda-python results equal|NO")

echo "== added cost per launch (100k launches of an empty kernel)"
p=$($PY "$WORK/bench_prog.py" 100000 | awk '/ns_per_launch/ {print $2}')
s=$($PY -m kernelcheck.cli run --quiet -- $PY "$WORK/bench_prog.py" 100000 | awk '/ns_per_launch/ {print $2}')
RESULTS+=("plain ns/launch (python loop)|$p" "under shim ns/launch|$s")
RESULTS+=("ratio|$($PY -c "print(f'{$s / $p:.3f}')")" "added ns|$($PY -c "print(f'{$s - $p:.0f}')")")
for f in "$WORK/torch.json" "$WORK/cp.json"; do
  [ -f "$f" ] && RESULTS+=("$(basename "$f") verdicts|$($PY -c "import json; d=json.load(open('$f')); print(d['instances'], 'instances:', d['idempotent'], 'idempotent,', d['not_idempotent'], 'not idempotent,', d['not_proven'], 'not proven')")")
done

echo
echo "| check | value |"
echo "|---|---|"
for r in "${RESULTS[@]}"; do echo "| ${r%%|*} | ${r#*|} |"; done
