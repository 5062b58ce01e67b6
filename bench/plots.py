"""Figures of docs/evaluation.md, from quick reruns of the benchmarks.

Run ``python bench/plots.py [--instances 12] [--out docs] [--outputs DIR] [--reuse]``; needs
the ``plot`` extra (matplotlib). It runs ``bench/soundness.py``, ``bench/bench_parse.py``,
``bench/bench_emu.py`` and ``bench/bench_launch.py`` as child processes with small settings,
keeps their printed tables in ``--outputs`` (default: a ``kernelcheck-bench`` directory
in the system's temporary directory; ``--reuse`` reads them from there instead of
rerunning), measures the analysis time of every fixture kernel and the Python LaunchCheck
evaluation of every example instance of fixtures/expected.toml itself, and writes:

- ``eval-accuracy.png``: false-negative rate per kernel and flavour against the oracle,
  beside the reference system's 18.54%;
- ``eval-latency.png``: distribution of analysis time per kernel, and of LaunchCheck
  evaluation time per instance in Python and in C;
- ``eval-throughput.png``: PTX parsing (lines/s) and emulator speed (thread-instructions/s).

It prints the figures' numbers as it goes, and the machine it ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REFERENCE_FN_RATE = 18.54  # percent, arXiv 2410.23661


def _run(script: str, args: list[str], outputs: Path, reuse: bool) -> str:
    """The stdout of ``bench/<script> args``, saved under ``outputs`` (or read from there)."""
    path = outputs / (Path(script).stem + ".txt")
    if reuse and path.exists():
        return path.read_text()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args],
                          capture_output=True, text=True, cwd=ROOT)
    print(f"{script} {' '.join(args)}: exit {done.returncode} in "
          f"{time.perf_counter() - start:.0f} s", file=sys.stderr)
    path.write_text(done.stdout)
    if done.returncode not in (0, 1):  # soundness exits 1 on a false idempotent: plot it
        raise SystemExit(f"{script} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def _table(text: str, first_header: str) -> list[list[str]]:
    """The rows of the markdown table whose first header cell is ``first_header``."""
    rows, inside = [], False
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_header:
            inside, rows = True, []
            continue
        if inside:
            if not line.startswith("|"):
                break
            if not set(cells[0]) <= set("-: "):
                rows.append(cells)
    return rows


def _number(cell: str) -> float:
    return float(re.sub(r"[^0-9.\-]", "", cell))


def accuracy(text: str, out: Path, plt) -> None:
    rows = _table(text, "flavour")
    kernels = [(f"{r[1]} ({r[0]})", _number(r[6])) for r in rows
               if r[0] != "**total**" and r[6] != "-" and _number(r[6]) > 0]
    total = next(r for r in rows if r[0] == "**total**")
    false_idem = re.search(r"false idempotent: (\d+)", text).group(1)
    instances = re.search(r"instances run: (\d+)", text).group(1)
    rate = re.search(r"false-negative rate: ([0-9.]+)%", text).group(1)
    print(f"accuracy: {instances} instances, false idempotent {false_idem}, "
          f"false-negative rate {rate}%, {len(kernels)} kernel/flavour pairs with a miss")
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(kernels) + 1.8))
    names = [k for k, _ in kernels]
    ax.barh(names, [v for _, v in kernels], color="#4c72b0")
    ax.axvline(REFERENCE_FN_RATE, color="#c44e52", linestyle="--",
               label=f"reference system, overall: {REFERENCE_FN_RATE}%")
    ax.axvline(float(rate), color="#55a868", label=f"kernelcheck, overall: {rate}%")
    ax.invert_yaxis()
    ax.set_xlabel("false-negative rate (% of oracle-idempotent instances not proven)")
    ax.set_title(f"Kernels with any miss ({instances} instances, {false_idem} false "
                 f"idempotent);\nevery other kernel 0%, or no oracle-idempotent instance",
                 fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    fig.savefig(out / "eval-accuracy.png", dpi=110)
    assert total


def _analysis_and_eval_times() -> tuple[list[float], list[float]]:
    """Seconds per fixture kernel analysis; seconds per Python LaunchCheck evaluation."""
    from kernelcheck.analysis.summary import analyze_kernel
    from kernelcheck.launch.evaluate import evaluate
    from kernelcheck.ptx.parser import parse_ptx_file
    from tests.analysis.test_fixtures import param_bytes

    expected = tomllib.loads((ROOT / "fixtures" / "expected.toml").read_text())["kernels"]
    analysis, cases = [], []
    for flavour in ("sm_80", "sm_90", "nvrtc", "nvrtc12"):
        for path in sorted((ROOT / "fixtures" / "ptx" / flavour).glob("*.ptx")):
            module = parse_ptx_file(path)
            for kernel in module.kernels:
                start = time.perf_counter()
                summary = analyze_kernel(module, kernel)
                analysis.append(time.perf_counter() - start)
                entry = expected.get(kernel.name) or {}
                for inst in entry.get("instances", []):
                    if "allocations" not in inst:
                        cases.append((summary.launch_check,
                                      param_bytes(kernel, inst, entry["param_names"]),
                                      tuple(inst["grid"]), tuple(inst["block"])))
    per_instance = []
    for case in cases:
        evaluate(*case)  # compiled on first use, outside the timing
        best = min(_timed(evaluate, case) for _ in range(20))
        per_instance.append(best)
    return analysis, per_instance


def _timed(fn, args) -> float:
    t0 = time.perf_counter_ns()
    fn(*args)
    return (time.perf_counter_ns() - t0) * 1e-9


def latency(launch_text: str, out: Path, plt, np) -> None:
    analysis, evaluation = _analysis_and_eval_times()
    analysis_ms = np.sort(np.array(analysis) * 1e3)
    eval_us = np.sort(np.array(evaluation) * 1e6)
    c_rows = _table(launch_text, "evaluator")
    print(f"latency: analysis per kernel ({len(analysis_ms)} kernels): median "
          f"{np.median(analysis_ms):.2f} ms, p95 {np.percentile(analysis_ms, 95):.1f} ms, "
          f"max {analysis_ms[-1]:.1f} ms; Python LaunchCheck ({len(eval_us)} instances, "
          f"fastest of 20): median {np.median(eval_us):.2f} us, p90 "
          f"{np.percentile(eval_us, 90):.2f} us, max {eval_us[-1]:.1f} us")
    for row in c_rows:
        print(f"latency: C {row[0]}: median {row[1]} ns, p90 {row[2]} ns, max {row[3]} ns")
    added = _table(launch_text, "kernel")
    for row in added:
        print(f"latency: added per launch under the shim, {row[0]}: {row[3]} ns")
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    ax = axes[0]
    ax.plot(analysis_ms, np.arange(1, len(analysis_ms) + 1) / len(analysis_ms))
    ax.set_xscale("log")
    ax.set_xlabel("analysis time per kernel (ms, log)")
    ax.set_ylabel("fraction of kernels")
    ax.set_title(f"Static analysis, {len(analysis_ms)} fixture kernels", fontsize=9)
    ax.grid(alpha=0.3)
    ax = axes[1]
    ax.plot(eval_us * 1e3, np.arange(1, len(eval_us) + 1) / len(eval_us),
            label="Python (compiled form)")
    for row, style in zip(c_rows, ("s", "^"), strict=False):
        median, p90, worst = (_number(c) for c in row[1:4])
        ax.plot([median, p90, worst], [0.5, 0.9, 1.0], marker=style, linestyle=":",
                label=f"C: {row[0]} (median, p90, max)")
    ax.axvline(5000, color="#c44e52", linestyle="--", label="reference system: 5 us")
    ax.set_xscale("log")
    ax.set_xlabel("LaunchCheck evaluation per instance (ns, log)")
    ax.set_ylabel("fraction of instances")
    ax.set_title("Deciding an instance", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "eval-latency.png", dpi=110)


def throughput(parse_text: str, emu_text: str, out: Path, plt) -> None:
    parse = _table(parse_text, "input")
    emu = _table(emu_text, "workload")
    for row in parse:
        print(f"throughput: parse {row[0]}: {row[3]} lines/s")
    for row in emu:
        print(f"throughput: emulator {row[0]}: {row[3]} M/s trace off, {row[4]} M/s on")
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    ax = axes[0]
    ax.barh([r[0] for r in parse], [_number(r[3]) / 1e3 for r in parse], color="#4c72b0")
    ax.axvline(100, color="#c44e52", linestyle="--", label="target: 100k lines/s")
    ax.invert_yaxis()
    ax.set_xlabel("PTX lines per second (thousands)")
    ax.set_title("PTX parsing into the IR", fontsize=9)
    ax.legend(fontsize=7)
    ax.tick_params(axis="y", labelsize=7)
    ax = axes[1]
    names = [r[0].split(":")[-1].strip() for r in emu]
    y = range(len(emu))
    ax.barh([i - 0.2 for i in y], [_number(r[3]) for r in emu], height=0.4, label="trace off")
    ax.barh([i + 0.2 for i in y], [_number(r[4]) for r in emu], height=0.4, label="trace on")
    ax.set_yticks(list(y), names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("million thread-instructions per second")
    ax.set_title("CPU emulator", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "eval-throughput.png", dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=12,
                        help="random instances per kernel for bench/soundness.py")
    parser.add_argument("--out", default=str(ROOT / "docs"), help="where the PNGs go")
    parser.add_argument("--outputs",
                        default=str(Path(tempfile.gettempdir()) / "kernelcheck-bench"),
                        help="where the benchmarks' printed tables are kept")
    parser.add_argument("--reuse", action="store_true",
                        help="read the benchmarks' tables from --outputs, do not rerun")
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    out, outputs = Path(args.out), Path(args.outputs)
    out.mkdir(parents=True, exist_ok=True)
    outputs.mkdir(parents=True, exist_ok=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}")
    soundness = _run("soundness.py", ["--instances", str(args.instances)], outputs, args.reuse)
    parse = _run("bench_parse.py", ["--lines", "50000", "--repeat", "1"], outputs, args.reuse)
    emu = _run("bench_emu.py", [], outputs, args.reuse)
    launch = _run("bench_launch.py", ["--launches", "20000", "--repeats", "3",
                                      "--evaluations", "2000"], outputs, args.reuse)
    accuracy(soundness, out, plt)
    latency(launch, out, plt, np)
    throughput(parse, emu, out, plt)
    print(f"wrote {out / 'eval-accuracy.png'}, eval-latency.png, eval-throughput.png")


if __name__ == "__main__":
    main()
