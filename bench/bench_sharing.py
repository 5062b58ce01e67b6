"""How many kernels of a library share their code, and whether a shared record is right.

Plans the sharing of a binary's images (:func:`kernelcheck.sharing.plan_sharing`) and
prints the kernels, the distinct content keys, the copies (kernels that will get another
kernel's record), the images left with nothing to analyse, the families with the most
copies, and the time the plan took. With ``--check N`` it then draws N copies at random
and analyses each in its own image as ``--no-sharing`` would, next to its first kernel,
and compares the copy's own record with the first kernel's record renamed
(:func:`kernelcheck.sharing.renamed_record`); any difference is printed and makes the exit
status 1::

    python bench/bench_sharing.py --file libtorch_cuda.so --check 20 --seed 1
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter


def main(argv: list[str] | None = None) -> int:
    from kernelcheck.binary.demangle import demangle
    from kernelcheck.corpus import analyse_image, plan_jobs
    from kernelcheck.sharing import plan_sharing, renamed_record

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", required=True, help="a cubin, fatbin or library")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--check", type=int, default=0, metavar="N",
                        help="analyse N random copies both ways and compare the records")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kernel-timeout", type=float, default=20.0)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    jobs, _ = plan_jobs(args.file, args.arch)
    listed = time.perf_counter() - started
    started = time.perf_counter()
    plan = plan_sharing(jobs)
    planned = time.perf_counter() - started
    copies = [(original, copy) for original, found in plan.copies_of.items()
              for copy in found]
    kernels = _count_kernels(jobs)
    print(f"{args.file}: {len(jobs)} {args.arch} images listed in {listed:.1f} s, "
          f"sharing planned in {planned:.1f} s")
    print(f"  kernels {kernels}, distinct codes {kernels - len(copies)}, copies "
          f"{len(copies)} ({100 * len(copies) / max(kernels, 1):.1f}%), images with "
          f"nothing left to analyse {len(plan.whole)}")
    families = Counter(_family(demangle(name) or name) for _, (_, name) in copies)
    for family, count in families.most_common(10):
        print(f"    {count:6d}  {family}")
    if not args.check:
        return 0
    options = {"kernel_timeout": args.kernel_timeout}
    drawn = random.Random(args.seed).sample(copies, min(args.check, len(copies)))
    differ = 0
    for (source, name), (target, copy_name) in drawn:
        first = _record(analyse_image(jobs[source], "analysis", {**options, "kernel": name}))
        own = _record(analyse_image(jobs[target], "analysis",
                                    {**options, "kernel": copy_name}))
        shared = renamed_record(first, jobs[target], copy_name)
        same = (json.dumps(shared.to_json(), sort_keys=True)
                == json.dumps(own.to_json(), sort_keys=True))
        differ += not same
        print(f"  {'same' if same else 'DIFFERENT'}: {copy_name[:70]} "
              f"({jobs[target].image}, first in {jobs[source].image}; "
              f"analysed in {own.seconds or 0:.2f} s)")
    print(f"  {len(drawn) - differ} of {len(drawn)} copies have the record their own "
          "analysis gives")
    return 1 if differ else 0


def _record(result):
    records, _ = result
    found = [r for r in records if r.kernel is not None]
    if len(found) != 1:
        raise SystemExit(f"expected one record, got {len(found)}: {records[:2]}")
    return found[0]


def _count_kernels(jobs) -> int:
    from kernelcheck.binary.cubin import CubinFile

    return sum(CubinFile(job.data).num_kernels for job in jobs if job.kind == "cubin")


def _family(demangled: str) -> str:
    name = demangled[5:] if demangled.startswith("void ") else demangled
    cut = min((k for k in (name.find("<"), name.find("(")) if k >= 0), default=len(name))
    return name[:cut].split("::")[-1][:60] or name[:60]


if __name__ == "__main__":
    sys.exit(main())
