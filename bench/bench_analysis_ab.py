"""Benchmark: the analysis of the same library kernels by two versions of kernelcheck.

Not part of CI. It picks kernels from a binary's images (``--images`` images spread evenly
over the file, then ``--kernels`` kernels drawn with ``--seed`` among those with
``--min-instructions`` to ``--max-instructions`` SASS instructions), and analyses each one
with the source tree ``--before`` and with ``--after``, each in its own process, in turn for
``--rounds`` rounds (before, after, before, after, ...), so both see the same machine. It
prints the CPU seconds of each version (per kernel the least over the rounds), their ratio,
the kernels whose result differs with where each first differs, and the largest changes.
A result is the class, reasons, conditions and accesses, with the serial numbers of lifted
instructions, blocks and loop variables left out, and the launch check's reason and size
(its program is not compared: the order of a sum's terms may differ between versions).

``--slower-than S`` compares the slow kernels instead: the ``--before`` tree first times
every kernel of the chosen images in the instruction range, and the ``--kernels`` drawn are
among those that took at least ``S`` seconds (all of them when fewer).

Usage::

    git worktree add /tmp/kc-before <commit>
    python bench/bench_analysis_ab.py --file libtorch_cuda.so --before /tmp/kc-before \\
        [--after .] [--images 12] [--kernels 40] [--seed 0] [--rounds 2] [--slower-than S]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time


def _child(root: str, images: str, kernels: list[str], timeout: float) -> dict:
    """Analyse ``kernels`` of the images pickled in the file ``images`` with the kernelcheck
    of ``root``: per kernel the CPU seconds and a fingerprint of the result."""
    sys.path.insert(0, os.path.abspath(root))
    import hashlib
    import pickle

    from kernelcheck.analysis.budget import BudgetExceeded, within_budget
    from kernelcheck.sass.analysis import analyze_sass_kernel

    with open(images, "rb") as source:
        modules = _modules(pickle.load(source))
    wanted = set(kernels)
    out = {}
    for module in modules:
        for function in module.functions:
            if function.name not in wanted:
                continue
            start = time.process_time()
            try:
                summary = within_budget(lambda f=function, m=module: analyze_sass_kernel(m, f),
                                        timeout)
                check = summary.launch_check
                text = _without_serials(repr((
                    summary.kernel_class, summary.reasons, summary.conditions,
                    summary.accesses, check.not_proven, len(check.program),
                    len(check.accesses), len(check.pairs))))
                kind = summary.kernel_class
            except BudgetExceeded:
                text = kind = "over the budget"
            seconds = time.process_time() - start
            out[function.name] = (seconds, hashlib.sha1(text.encode()).hexdigest(), kind,
                                  text)
    return out


def _without_serials(text: str) -> str:
    """A result text without the names that count lifted instructions, blocks and loop
    variables: they move when a version lifts fewer instructions, and say nothing about
    the result."""
    import re

    for pattern, name in ((r"@\d+", "@"), (r"#\d+", "#"), (r"block \d+", "block"),
                          (r"loop\d+:", "loop:"), (r"\bk\d+\b", "k")):
        text = re.sub(pattern, name, text)
    return text


def _modules(images: list[tuple[str, bytes]]) -> list:
    """The SASS modules of ``(label, cubin bytes)`` images."""
    from kernelcheck.sass.loader import load_cubin_sass

    return [load_cubin_sass(data, label).module for label, data in images]


def _pick(path: str, arch: str, images: int, low: int, high: int) -> tuple[list, list[str]]:
    """The chosen images, as ``(label, cubin bytes)``, and their kernels in the range."""
    from kernelcheck.corpus import plan_jobs

    cubins = [(job.image, job.data) for job in plan_jobs(path, arch)[0] if job.kind == "cubin"]
    step = max(1, len(cubins) // images)
    chosen = cubins[::step][:images]
    names = sorted({f.name for module in _modules(chosen) for f in module.functions
                    if f.is_kernel and f.body is not None
                    and low <= len(f.instructions) <= high})
    return chosen, names


def _slower_than(args, images: str, names: list[str]) -> list[str]:
    """The kernels of ``names`` the ``--before`` tree takes at least ``--slower-than``
    seconds to analyse (one pass, in its own process)."""
    times = _run_child(args, args.before, images, names)
    slow = [name for name in names if times[name][0] >= args.slower_than]
    print(f"{len(slow)} of {len(names)} kernels took at least {args.slower_than:g} s "
          f"with the before version")
    return slow


def _run_child(args, root: str, images: str, kernels: list[str]) -> dict:
    # The spec goes through a file: thousands of kernel names overflow a command line.
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as spec:
        json.dump({"root": root, "images": images, "kernels": kernels}, spec)
    try:
        done = subprocess.run([sys.executable, __file__, "--file", args.file, "--arch",
                               args.arch, "--timeout", str(args.timeout), "--child",
                               spec.name], capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": "0"})
    finally:
        os.unlink(spec.name)
    if done.returncode:
        raise SystemExit(f"the version at {root} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", required=True)
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--before", help="source tree of the first version (required)")
    parser.add_argument("--after", default=".", help="source tree of the second version")
    parser.add_argument("--images", type=int, default=12)
    parser.add_argument("--kernels", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--min-instructions", type=int, default=300)
    parser.add_argument("--max-instructions", type=int, default=5000)
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds one kernel's analysis may take")
    parser.add_argument("--slower-than", type=float, metavar="S",
                        help="draw the kernels among those the before version takes at "
                             "least S seconds to analyse")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        with open(args.child) as source:
            spec = json.load(source)
        json.dump(_child(spec["root"], spec["images"], spec["kernels"], args.timeout),
                  sys.stdout)
        return 0

    if not args.before:
        parser.error("--before is required")
    import random

    sys.path.insert(0, os.path.abspath(args.after))
    images, names = _pick(args.file, args.arch, args.images, args.min_instructions,
                          args.max_instructions)
    with tempfile.NamedTemporaryFile(suffix=".pickle", delete=False) as sink:
        pickle.dump(images, sink)
    try:
        if args.slower_than is not None:
            names = _slower_than(args, sink.name, names)
        kernels = sorted(random.Random(args.seed).sample(names, min(args.kernels, len(names))))
        print(f"{len(kernels)} kernels of {len(images)} images of {args.file}")
        best = _rounds(args, sink.name, kernels)
    finally:
        os.unlink(sink.name)
    _report(best, args.rounds)
    return 0


def _rounds(args, images: str, kernels: list[str]) -> dict[str, dict]:
    """Each version in its own process, in turn; per kernel the least CPU time."""
    best: dict[str, dict] = {"before": {}, "after": {}}
    for round_ in range(args.rounds):
        for label, root in (("before", args.before), ("after", args.after)):
            start = time.perf_counter()
            results = _run_child(args, root, images, kernels)
            total = sum(r[0] for r in results.values())
            print(f"round {round_ + 1} {label:6}: {total:7.1f} s CPU in analysis "
                  f"({time.perf_counter() - start:.0f} s wall with loading)")
            for name, result in results.items():
                kept = best[label].get(name)
                if kept is None or result[0] < kept[0]:
                    best[label][name] = result
    return best


def _report(best: dict[str, dict], rounds: int) -> None:
    before, after = best["before"], best["after"]
    common = sorted(set(before) & set(after))
    t_before = sum(before[k][0] for k in common)
    t_after = sum(after[k][0] for k in common)
    print(f"least over {rounds} round(s): before {t_before:.1f} s, after {t_after:.1f} s, "
          f"ratio {t_before / t_after if t_after else float('inf'):.2f}x")
    differ = [k for k in common if before[k][1] != after[k][1]]
    print(f"results differ for {len(differ)} of {len(common)} kernels")
    for name in differ:
        print(f"  {before[name][2]} -> {after[name][2]}: {name[:100]}")
        print(_first_difference(before[name][3], after[name][3]))
    changes = sorted(common, key=lambda k: before[k][0] - after[k][0], reverse=True)
    print("largest changes (before -> after, seconds):")
    for name in dict.fromkeys(changes[:5] + changes[-3:]):
        print(f"  {before[name][0]:6.2f} -> {after[name][0]:6.2f}  {name[:90]}")


def _first_difference(old: str, new: str, context: int = 100) -> str:
    """Where two result texts first differ, with some context either side."""
    at = next((k for k, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
              min(len(old), len(new)))
    start = max(0, at - context)
    return (f"      before: ...{old[start:at + 2 * context]}...\n"
            f"      after : ...{new[start:at + 2 * context]}...")


if __name__ == "__main__":
    raise SystemExit(main())
