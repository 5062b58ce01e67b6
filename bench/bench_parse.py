"""Parse throughput (PTX text to IR) and graph construction cost.

Run: ``python bench/bench_parse.py [--lines 200000] [--repeat 3]``

Prints a markdown table: lines/s and instructions/s of the table driver and of lark's own
LALR engine on the same text in the same run, the two taking turns (their ratio is what to
compare across machines; each figure is the best of ``--repeat`` parses), once on a corpus
of at least ``--lines`` lines made by repeating the fixture PTX, and once on every fixture
file parsed once with cold intern tables; then the CFG + def-use construction time per
1,000 instructions over every fixture kernel.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kernelcheck.ir.cfg import control_flow_graph  # noqa: E402
from kernelcheck.ir.dataflow import def_use_graph  # noqa: E402
from kernelcheck.ptx import parser as ptx_parser  # noqa: E402


def _corpus(min_lines: int) -> str:
    files = sorted((ROOT / "fixtures/ptx").glob("sm_*/*.ptx")) + sorted(
        (ROOT / "fixtures/ptx/nvrtc").glob("*.ptx")
    )
    header = ".version 9.0\n.target sm_90\n.address_size 64\n"
    bodies = []
    for path in files:
        text = path.read_text()
        # Everything after the module header (.version / .target / .address_size).
        start = text.index("\n", text.index(".address_size")) + 1
        bodies.append(text[start:])
    unit = "\n".join(bodies)
    copies = max(1, -(-min_lines // unit.count("\n")))
    return header + unit * copies


def _clear_intern_tables() -> None:
    _, transformer, _ = ptx_parser._parser()
    for table in (transformer._registers, transformer._opcodes, transformer._addresses,
                  transformer._guards, transformer._runs, transformer._locs):
        table.clear()


def _time_parse(text: str, engine: str, repeat: int, cold: bool = False) -> float:
    times = []
    for _ in range(repeat):
        if cold:
            _clear_intern_tables()
        gc.collect()
        start = time.perf_counter()
        ptx_parser.parse_ptx(text, engine=engine)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--lines", type=int, default=200_000)
    options.add_argument("--repeat", type=int, default=3)
    args = options.parse_args()

    ptx_parser.parse_ptx(".version 9.0\n.target sm_90\n.address_size 64\n")  # build once
    corpus = _corpus(args.lines)
    lines = corpus.count("\n")
    instructions = sum(len(f.instructions) for f in ptx_parser.parse_ptx(corpus).functions)

    rows = []
    # The engines take turns, so a slow spell of the machine falls on both.
    best = {"fast": float("inf"), "lark": float("inf")}
    for _ in range(args.repeat):
        for engine in best:
            best[engine] = min(best[engine], _time_parse(corpus, engine, 1))
    for engine, seconds in best.items():
        rows.append((f"repeated fixtures, {engine}", lines, seconds, instructions))
    files = sorted((ROOT / "fixtures/ptx").glob("*/*.ptx"))
    texts = [p.read_text() for p in files]
    unique_lines = sum(t.count("\n") for t in texts)
    unique_instructions = sum(
        len(f.instructions) for t in texts for f in ptx_parser.parse_ptx(t).functions
    )
    for engine in ("fast", "lark"):
        total = sum(_time_parse(t, engine, args.repeat, cold=True) for t in texts)
        rows.append((f"each fixture once, cold, {engine}", unique_lines, total,
                     unique_instructions))

    print("| input | lines | seconds | lines/s | instructions/s |")
    print("|---|---:|---:|---:|---:|")
    for name, count, seconds, instrs in rows:
        print(f"| {name} | {count:,} | {seconds:.3f} | {count / seconds:,.0f} | "
              f"{instrs / seconds:,.0f} |")
    fast, lark = rows[0][2], rows[1][2]
    print(f"\ntable driver vs lark engine on the repeated corpus: {lark / fast:.2f}x faster")

    per_kernel = []
    total_instructions = 0
    total_seconds = 0.0
    for text in texts:
        for function in ptx_parser.parse_ptx(text).functions:
            if function.body is None or not function.instructions:
                continue
            start = time.perf_counter()
            cfg = control_flow_graph(function)
            def_use_graph(function, cfg)
            seconds = time.perf_counter() - start
            total_seconds += seconds
            total_instructions += len(function.instructions)
            per_kernel.append(seconds / len(function.instructions) * 1000)
    print("\n| graphs (CFG + def-use) | value |")
    print("|---|---:|")
    print(f"| functions | {len(per_kernel)} |")
    print(f"| instructions | {total_instructions:,} |")
    print(f"| ms per 1,000 instructions (all) | {total_seconds / total_instructions * 1e6:.1f} |")
    print(f"| ms per 1,000 instructions (median function) | "
          f"{statistics.median(per_kernel) * 1000:.1f} |")


if __name__ == "__main__":
    main()
