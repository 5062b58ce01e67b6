"""Benchmark: analysis time per fixture kernel and LaunchCheck evaluation latency.

Run ``python bench/bench_analyze.py``; prints a markdown table.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.launch.evaluate import evaluate
from kernelcheck.ptx.parser import parse_ptx_file

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "ptx"


def main() -> None:
    times = []
    checks = []
    for d in ("sm_80", "sm_90", "nvrtc"):
        for path in sorted((ROOT / d).glob("*.ptx")):
            module = parse_ptx_file(path)
            for kernel in module.kernels:
                start = time.perf_counter()
                summary = analyze_kernel(module, kernel)
                times.append(time.perf_counter() - start)
                checks.append((summary.launch_check, kernel))
    times.sort()
    lat = []
    for check, kernel in checks[:40]:
        params = bytes(kernel.param_size)
        for _ in range(2500):
            t0 = time.perf_counter_ns()
            evaluate(check, params, (4, 1, 1), (256, 1, 1))
            lat.append(time.perf_counter_ns() - t0)
    lat.sort()
    print("| measure | median | p95/p99 | max |")
    print("|---|---|---|---|")
    print(f"| analysis per kernel ({len(times)} kernels), ms | "
          f"{1e3 * statistics.median(times):.2f} | {1e3 * times[int(0.95 * len(times))]:.2f} "
          f"| {1e3 * times[-1]:.2f} |")
    print("| share in Z3 | 0% | | |")
    print(f"| LaunchCheck evaluation ({len(lat)} runs), us | {lat[len(lat) // 2] / 1e3:.2f} "
          f"| {lat[int(0.99 * len(lat))] / 1e3:.2f} | {lat[-1] / 1e3:.2f} |")


if __name__ == "__main__":
    main()
