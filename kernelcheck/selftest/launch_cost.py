"""The launch shim's added cost per launch, plain against preloaded, in the same call.

The method of bench/bench_launch.py: a small C loop (compiled here with the C compiler the
shim is built with) calls ``cuLaunchKernel`` N times for one instance, through the pointer
cuda-bindings gets from ``cuGetProcAddress`` (under the shim, the shim's hook), then
synchronizes. Two kernels: an empty one (no accesses) and ``vec_add`` (a conditional kernel:
its LaunchCheck tests two write/read pairs), the second also with every launch evaluated
(``KERNELCHECK_SHIM_NO_MEMO=1``: no per-thread memo of the last instance). The kernels'
analyses are put in the cache first, as a warm run has them. Plain and shim runs alternate,
and the medians are compared: the added ns per launch and the ratio.

On a GPU the launches are the real driver's (asynchronous: the loop measures the submission
path). On the stand-in driver they are no-op launches (``KERNELCHECK_STANDIN_NOOP=1``: the
emulator is not entered), so that the figure is the shim's cost, not the emulator's.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from kernelcheck.selftest.cases import ptx_file
from kernelcheck.selftest.context import SectionContext
from kernelcheck.selftest.results import SectionResult

__all__ = ["run", "LOOP_C", "CHILD"]

LOOP_C = r"""
#include <time.h>
typedef int (*launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void *, void **, void **);
double launch_loop(void *fn, void *f, void **params, long n)
{
    launch_t launch = (launch_t)fn;
    struct timespec t0, t1;
    int bad = 0;
    launch(f, 1, 1, 1, 256, 1, 1, 0, 0, params, 0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long k = 0; k < n; k++)
        bad |= launch(f, 1, 1, 1, 256, 1, 1, 0, 0, params, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (bad)
        return -1;
    return ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n;
}
"""

CHILD = textwrap.dedent("""
    import ctypes, sys
    import numpy as np
    from cuda.bindings import driver as cu
    loop_lib, ptx, kernel, n = sys.argv[1:5]
    def ok(r):
        assert r[0] == cu.CUresult.CUDA_SUCCESS, r[0]
        return r[1] if len(r) == 2 else r[1:]
    ok(cu.cuInit(0))
    ok(cu.cuCtxSetCurrent(ok(cu.cuDevicePrimaryCtxRetain(ok(cu.cuDeviceGet(0))))))
    mod = ok(cu.cuModuleLoadData(open(ptx, "rb").read() + b"\\0"))
    f = ok(cu.cuModuleGetFunction(mod, kernel.encode()))
    buf = int(ok(cu.cuMemAlloc(1 << 20)))
    values = [np.array([buf + 4096 * k], np.uint64) for k in range(3)] + \\
        [np.array([256], np.int32)]
    params = np.array([v.ctypes.data for v in values], dtype=np.uint64)
    fn = ok(cu.cuGetProcAddress(b"cuLaunchKernel", 12000, 0))[0]
    lib = ctypes.CDLL(loop_lib)
    lib.launch_loop.restype = ctypes.c_double
    lib.launch_loop.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_long]
    ns = lib.launch_loop(int(fn), int(f), params.ctypes.data, int(n))
    ok(cu.cuCtxSynchronize())
    print(f"{ns:.2f}")
""")


def _loop_library(build: Path) -> Path:
    from kernelcheck.shim.build import find_compiler

    src = build / "launch_loop.c"
    lib = build / "liblaunch_loop.so"
    src.write_text(LOOP_C)
    subprocess.run([find_compiler(), "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)],
                   check=True, capture_output=True)
    return lib


def run(ctx: SectionContext) -> SectionResult:
    """The ``launch`` section (see the module docs)."""
    from kernelcheck.cache import AnalysisCache
    from kernelcheck.cache.warm import warm_cache
    from kernelcheck.shim.build import preload_library
    from kernelcheck.shim.launcher import shim_environment

    device = ctx.device
    result = SectionResult("launch")
    launches = 10_000 if ctx.quick else 100_000
    repeats = 2 if ctx.quick else 5
    base = dict(os.environ)
    if device.standin:
        base["KERNELCHECK_STANDIN_NOOP"] = "1"
    cases = (("misc", "empty_kernel", False), ("vec_add", "vec_add", False),
             ("vec_add", "vec_add", True))
    rows = []
    with tempfile.TemporaryDirectory(prefix="kc-launch-") as tmp:
        tmp = Path(tmp)
        cache_dir = tmp / "cache"
        cache_dir.mkdir(mode=0o700)
        (tmp / "reports").mkdir()
        cache = AnalysisCache(cache_dir)
        loop = _loop_library(tmp)
        shim = shim_environment(base, preload_library(), cache_dir, tmp / "reports")
        for kernel_key, kernel, no_memo in cases:
            if ctx.out_of_time(reserve=5.0):
                result.capped = True
                break
            fixture = "empty_kernel" if kernel_key == "misc" else kernel
            path = ptx_file(ctx.root, fixture, device.driver_version, device.arch)
            warm_cache(path, cache=cache)
            variants = (("plain", base), ("shim", dict(
                shim, KERNELCHECK_SHIM_NO_MEMO="1" if no_memo else "0")))
            times: dict[str, list[float]] = {"plain": [], "shim": []}
            for _ in range(repeats):
                for label, env in variants:
                    done = subprocess.run([sys.executable, "-c", CHILD, str(loop), str(path),
                                           kernel, str(launches)], env=env,
                                          capture_output=True, text=True, timeout=120)
                    if done.returncode:
                        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
                        result.fail(kernel, f"{label} launch loop failed: {tail}",
                                    ctx.reproducer(None))
                        return result.finish()
                    times[label].append(float(done.stdout.split()[-1]))
            plain, under = statistics.median(times["plain"]), statistics.median(times["shim"])
            label = f"{kernel} (every launch evaluated)" if no_memo else kernel
            rows.append({"kernel": label, "plain_ns": plain, "shim_ns": under,
                         "added_ns": under - plain, "ratio": under / plain if plain else None})
            result.passed += 1
        cache.close()
    result.figures.update({"rows": rows, "launches": launches, "repeats": repeats,
                           "noop_launches": device.standin})
    how = "no-op launches of the stand-in" if device.standin else "launches on the GPU"
    result.summary = (f"added ns per launch ({how}, median of {repeats} x {launches}): " +
                      "; ".join(f"{r['kernel']} {r['plain_ns']:.0f} -> {r['shim_ns']:.0f} "
                                f"(+{r['added_ns']:.0f})" for r in rows))
    return result.finish()
