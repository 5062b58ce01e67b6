"""Benchmark: the SASS analysis with and without leaving irrelevant instructions unlifted.

Not part of CI. It draws ``--images`` images of a binary with ``--seed`` and ``--kernels``
kernels of each, and analyses every kernel twice in this process, in turn: lifting every
instruction (``lift_kernel(..., every_instruction=True)``) and leaving out those whose
results reach no address, branch or atomic (:mod:`kernelcheck.sass.relevance`, the
default). It prints both times per kernel, their sums and ratio, and the kernels whose
report differs: class, reasons, conditions and accesses (address and guard) compared
after the names that count lifted instructions and blocks are made alike (``?ld@412``,
``block 52``, ``loop65:``: they move when fewer instructions are lifted), rendered terms
cut where the renderer cut one of them.

Usage::

    python bench/bench_relevance.py --file libtorch_cuda.so [--arch sm_90] [--images 6]
        [--kernels 8] [--seed 1] [--budget 3]
"""

from __future__ import annotations

import argparse
import random
import re
import time

_NAMES = ((r"@\d+", "@"), (r"#\d+", "#"), (r"block \d+", "block"), (r"loop\d+:", "loop:"),
          (r"\bk\d+\b", "k"))


def _normal(text: str) -> str:
    for pattern, name in _NAMES:
        text = re.sub(pattern, name, text)
    return text[:200] if "\u2026" in text else text


def _report(summary) -> tuple:
    return (summary.kernel_class, [_normal(r) for r in summary.reasons],
            [_normal(c) for c in summary.conditions],
            [(a.index, a.kind, _normal(a.address), _normal(str(a.guard)))
             for a in summary.accesses])


def _analyse(module, function, every: bool, budget: float):
    import kernelcheck.sass.analysis as sass_analysis
    from kernelcheck.analysis.budget import BudgetExceeded, within_budget
    from kernelcheck.sass.lift import lift_kernel

    sass_analysis.lift_kernel = lambda f, m=None: lift_kernel(f, m, every_instruction=every)
    start = time.process_time()
    try:
        summary = within_budget(lambda: sass_analysis.analyze_sass_kernel(module, function),
                                budget)
        report = _report(summary)
    except BudgetExceeded:
        report = ("budget",)
    finally:
        sass_analysis.lift_kernel = lift_kernel
    return time.process_time() - start, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", required=True)
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--images", type=int, default=6)
    parser.add_argument("--kernels", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", type=float, default=3.0,
                        help="seconds one analysis may take")
    args = parser.parse_args(argv)

    from kernelcheck.binary.cubin import CubinFile
    from kernelcheck.binary.nvdisasm import disassemble
    from kernelcheck.corpus import plan_jobs
    from kernelcheck.ir.nodes import Module
    from kernelcheck.sass.loader import functions_of_cubin, has_line_info, source_files

    jobs = [j for j in plan_jobs(args.file, args.arch)[0] if j.kind == "cubin"]
    rng = random.Random(args.seed)
    totals = [0.0, 0.0]
    differ = []
    count = 0
    for job in rng.sample(jobs, min(args.images, len(jobs))):
        cubin = CubinFile(job.data)
        code = disassemble(job.data, line_info=has_line_info(cubin))
        functions, _ = functions_of_cubin(cubin, code)
        module = Module(None, (cubin.arch,), 64, source_files(code) + functions, job.image)
        kernels = [f for f in functions if f.is_kernel and f.body is not None]
        for function in rng.sample(kernels, min(args.kernels, len(kernels))):
            every = _analyse(module, function, True, args.budget)
            sliced = _analyse(module, function, False, args.budget)
            totals[0] += every[0]
            totals[1] += sliced[0]
            count += 1
            same = every[1] == sliced[1]
            if not same:
                differ.append((function.name, every[1][0], sliced[1][0]))
            print(f"{every[0]:7.3f} s -> {sliced[0]:7.3f} s  {every[1][0]:>11} "
                  f"{len(function.instructions):6d} instr  {function.name[:60]}"
                  f"{'' if same else '  (report differs)'}", flush=True)
    print(f"{count} kernels: every instruction {totals[0]:.1f} s, sliced {totals[1]:.1f} s "
          f"CPU, ratio {totals[1] / max(totals[0], 1e-9):.2f}")
    print(f"reports that differ: {len(differ)}")
    for name, before, after in differ:
        print(f"  {before} -> {after}: {name[:100]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
