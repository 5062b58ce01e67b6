"""Emulator throughput: thread-instructions per second on fixture kernels, tracing off and on.

Run: python bench/bench_emu.py  (prints a markdown table)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kernelcheck.emu import Emulator  # noqa: E402
from kernelcheck.emu.instances import param_values, setup  # noqa: E402
from kernelcheck.ptx.parser import parse_ptx_file  # noqa: E402

CASES = [
    # (label, ptx file, kernel, param names, params, grid, block)
    ("compute-bound: matmul_tiled n=256", "sm_80/shared_tiles.ptx", "matmul_tiled",
     ["C", "A", "B", "n"], {"n": 256}, (16, 16, 1), (16, 16, 1)),
    ("compute-bound: inline_poly n=256k", "sm_80/structs_calls.ptx", "inline_poly",
     ["out", "in", "n"], {"n": 1 << 18}, (1024, 1, 1), (256, 1, 1)),
    ("memory-bound: vec_add n=1M", "sm_80/elementwise.ptx", "vec_add",
     ["out", "a", "b", "n"], {"n": 1 << 20}, (4096, 1, 1), (256, 1, 1)),
    ("divergent: spmv_csr 64k rows", "sm_80/gather_scatter.ptx", "spmv_csr",
     ["y", "rowptr", "col", "vals", "x", "nrows"], {"nrows": 1 << 16}, (256, 1, 1),
     (256, 1, 1)),
    ("divergent: early_return_masked n=256k", "sm_80/misc.ptx", "early_return_masked",
     ["out", "in", "mask", "n"], {"n": 1 << 18}, (1024, 1, 1), (256, 1, 1)),
]


def measure(case, trace: bool, repeat: int = 2):
    label, ptx, kernel, names, params, grid, block = case
    module = parse_ptx_file(ROOT / "fixtures" / "ptx" / ptx)
    best = None
    for _ in range(repeat):
        emu = Emulator()
        placed = setup(emu, kernel, params, grid, block, np.random.default_rng(0))
        program = emu.load_module(module)
        values = param_values(names, placed.params)
        t0 = time.perf_counter()
        result = emu.launch(program, kernel, grid=grid, block=block, params=values,
                            trace=trace)
        dt = time.perf_counter() - t0
        if best is None or dt < best[0]:
            best = (dt, result.thread_instructions)
    return best


def main() -> None:
    rows = ["| workload | threads | thread-instr | trace off (M/s) | trace on (M/s) | "
            "slowdown |", "|---|---|---|---|---|---|"]
    for case in CASES:
        threads = int(np.prod(case[5]) * np.prod(case[6]))
        t_off, ti = measure(case, False)
        t_on, _ = measure(case, True)
        rows.append(f"| {case[0]} | {threads} | {ti} | {ti / t_off / 1e6:.1f} | "
                    f"{ti / t_on / 1e6:.1f} | {t_on / t_off:.2f}x |")
        print(rows[-1], file=sys.stderr, flush=True)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
