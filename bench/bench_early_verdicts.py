"""Kernels a global atomic decides: the time saved and whether the class is the analysis's.

Not part of CI. Picks up to ``--images`` images of a binary that hold a kernel whose name
contains ``--kernel`` (drawn with ``--seed``), and analyses every kernel of each image twice
in this process, with the early verdicts of :mod:`kernelcheck.sass.decided` and without
them (the two in turn, the order swapped from image to image so both see the same
machine). It prints, for each way, the kernels' analysis time (sum, median, 90th
percentile) and their classes, then how many kernels the early verdict answered and the
class the whole analysis gave each of them: ``never``, or ``not_proven`` where it was
stopped or could not model something. Any other class (the atomic is not reached, or the
analysis proves more) is listed and makes the exit status 1::

    python bench/bench_early_verdicts.py --file libtorch_cuda.so --kernel reduce_kernel \\
        --images 4 --kernel-timeout 1
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter


def main(argv: list[str] | None = None) -> int:
    from kernelcheck.corpus import analyse_image, plan_jobs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", required=True, help="a cubin, fatbin or library")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--kernel", default="", help="images holding a kernel whose name "
                        "contains this (default: any)")
    parser.add_argument("--images", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kernel-timeout", type=float, default=1.0)
    args = parser.parse_args(argv)

    jobs, _ = plan_jobs(args.file, args.arch)
    jobs = [j for j in jobs if j.kind == "cubin" and args.kernel.encode() in j.data]
    chosen = sorted(random.Random(args.seed).sample(range(len(jobs)),
                                                    min(args.images, len(jobs))))
    runs: dict[bool, dict] = {True: {}, False: {}}
    for turn, index in enumerate(chosen):
        for early in ((True, False) if turn % 2 == 0 else (False, True)):
            records, _ = analyse_image(jobs[index], "analysis", {
                "kernel_timeout": args.kernel_timeout, "early_verdicts": early})
            for r in records:
                if r.kernel is not None and r.analysis is not None:
                    runs[early][(index, r.kernel)] = r
    print(f"{args.file}: {len(chosen)} of {len(jobs)} {args.arch} images holding "
          f"{args.kernel or 'any kernel'!r}: {len(runs[False])} kernels, "
          f"{args.kernel_timeout:g} s budget")
    for early, label in ((True, "early verdicts"), (False, "whole analysis")):
        seconds = sorted(r.seconds or 0.0 for r in runs[early].values())
        classes = Counter(r.analysis["class"] for r in runs[early].values())
        print(f"  {label:15s} sum {sum(seconds):7.1f} s  median {_rank(seconds, 0.5):.3f} s"
              f"  p90 {_rank(seconds, 0.9):.3f} s  classes {dict(sorted(classes.items()))}")
    decided = [key for key, r in runs[True].items() if r.decided_early]
    whole = Counter()
    wrong = []
    for key in decided:
        other = runs[False].get(key)
        found = other.analysis["class"] if other is not None else "missing"
        whole[found] += 1
        if found not in ("never", "not_proven"):
            wrong.append((key, found))
    print(f"  decided by an atomic: {len(decided)}; the whole analysis gives them "
          f"{dict(sorted(whole.items()))}")
    for (index, kernel), found in wrong:
        print(f"    image {index} {kernel}: {found}")
    return 1 if wrong else 0


def _rank(ordered: list[float], q: float) -> float:
    if not ordered:
        return 0.0
    return ordered[max(0, min(len(ordered) - 1, int(q * len(ordered) + 0.999999) - 1))]


if __name__ == "__main__":
    sys.exit(main())
