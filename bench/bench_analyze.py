"""Benchmark: analysis time per fixture kernel, the share spent in Z3, and LaunchCheck
evaluation latency over the example instances of fixtures/expected.toml.

Run ``python bench/bench_analyze.py [--evaluations N]``; prints a markdown table. Each
evaluation is one call of :func:`kernelcheck.launch.evaluate.evaluate` (the compiled fast
path with its fallback) on an instance of a fixture kernel of the sm_80, sm_90, nvrtc and
nvrtc12 PTX, cycling over every (kernel, example instance) pair.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernelcheck.analysis.summary import analyze_kernel  # noqa: E402
from kernelcheck.launch.evaluate import evaluate, evaluate_general  # noqa: E402
from kernelcheck.ptx.parser import parse_ptx_file  # noqa: E402
from tests.analysis.test_fixtures import param_bytes  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--evaluations", type=int, default=200_000)
    args = parser.parse_args()
    expected = tomllib.loads((ROOT / "fixtures" / "expected.toml").read_text())["kernels"]
    times, z3_times = [], []
    cases = []
    for d in ("sm_80", "sm_90", "nvrtc", "nvrtc12"):
        for path in sorted((ROOT / "fixtures" / "ptx" / d).glob("*.ptx")):
            module = parse_ptx_file(path)
            for kernel in module.kernels:
                start = time.perf_counter()
                summary = analyze_kernel(module, kernel)
                times.append(time.perf_counter() - start)
                z3_times.append(summary.z3_seconds)
                entry = expected.get(kernel.name)
                for inst in (entry or {}).get("instances", []):
                    if "allocations" in inst:
                        continue
                    params = param_bytes(kernel, inst, entry["param_names"])
                    cases.append((summary.launch_check, params, tuple(inst["grid"]),
                                  tuple(inst["block"])))
    for check, params, grid, block in cases:  # compile outside the timed loop
        evaluate(check, params, grid, block)
    lat = []
    counter = time.perf_counter_ns
    n = len(cases)
    for k in range(args.evaluations):
        check, params, grid, block = cases[k % n]
        t0 = counter()
        evaluate(check, params, grid, block)
        lat.append(counter() - t0)
    lat.sort()
    # The clobbered set of a not_idempotent verdict may be computed on first use: the cost
    # of a verdict whose clobbered set recovery then reads.
    with_set = []
    for k in range(min(args.evaluations, 50_000)):
        check, params, grid, block = cases[k % n]
        t0 = counter()
        v = evaluate(check, params, grid, block)
        if v.clobbered is not None:
            v.clobbered.ranges  # noqa: B018 - forces the deferred set
        with_set.append(counter() - t0)
    with_set.sort()
    general = []
    for k in range(min(args.evaluations, 20_000)):
        check, params, grid, block = cases[k % n]
        t0 = counter()
        evaluate_general(check, params, grid, block)
        general.append(counter() - t0)
    general.sort()
    times.sort()
    total = sum(times)
    print("| measure | median | p95/p99 | max |")
    print("|---|---|---|---|")
    print(f"| analysis per kernel ({len(times)} kernels), ms | "
          f"{1e3 * statistics.median(times):.2f} | {1e3 * times[int(0.95 * len(times))]:.2f} "
          f"| {1e3 * times[-1]:.2f} |")
    print(f"| share of analysis time in Z3 | {100 * sum(z3_times) / total:.1f}% "
          f"({sum(z3_times):.2f} s of {total:.2f} s) | | |")
    print(f"| LaunchCheck evaluation, compiled ({len(lat)} runs over {n} instances), us | "
          f"{lat[len(lat) // 2] / 1e3:.2f} | {lat[int(0.99 * len(lat))] / 1e3:.2f} "
          f"| {lat[-1] / 1e3:.2f} |")
    print(f"| LaunchCheck evaluation and its clobbered set ({len(with_set)} runs), us | "
          f"{with_set[len(with_set) // 2] / 1e3:.2f} | "
          f"{with_set[int(0.99 * len(with_set))] / 1e3:.2f} | {with_set[-1] / 1e3:.2f} |")
    print(f"| LaunchCheck evaluation, general ({len(general)} runs), us | "
          f"{general[len(general) // 2] / 1e3:.2f} | "
          f"{general[int(0.99 * len(general))] / 1e3:.2f} | {general[-1] / 1e3:.2f} |")


if __name__ == "__main__":
    main()
