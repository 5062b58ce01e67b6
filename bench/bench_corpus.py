"""Benchmark: the sm_90 SASS of PyTorch's libtorch_cuda.so parsed into the Kernel IR.

Not part of CI. It obtains the PyTorch CUDA wheel with
``pip download torch==2.14.1 --no-deps -d DIR`` (pip takes it from the local disk where a
constraints file or a wheel cache holds it), extracts ``torch/lib/libtorch_cuda.so``, and
runs :func:`kernelcheck.corpus.run_corpus` on it for one architecture. It prints images/s,
kernels/s, the share of worker time spent in nvdisasm, and the kernels parsed and failed
with failures grouped by cause. ``--limit N`` runs the first N images only (a measured
sample) and extrapolates to the whole corpus, saying so.

``--analyze N`` runs the idempotency analysis on the SASS of N images spread evenly over
the library (every kernel lifted by :mod:`kernelcheck.sass.lift`), and prints the class
distribution (always / conditional / never / not proven, the last split by reason), the
analysis time per kernel (median, 90th percentile, max; ``--kernel-timeout`` caps one
kernel, counted as not proven) and the extrapolation to the whole library.

Usage::

    python bench/bench_corpus.py [--dir /tmp/torchwheel] [--arch sm_90] [--jobs N]
                                 [--limit N] [--stage ir|structure] [--jsonl out.jsonl]
    python bench/bench_corpus.py --analyze 64 [--kernel-timeout 20] [--budget SECONDS]
    python bench/bench_corpus.py --file some/lib.so     # any binary, no download
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import time
import zipfile

WHEEL = "torch==2.14.1"
LIBRARY = "torch/lib/libtorch_cuda.so"


def obtain_library(directory: str) -> str:
    """Download (if needed) the torch wheel into ``directory`` and extract the library."""
    os.makedirs(directory, exist_ok=True)
    target = os.path.join(directory, "libtorch_cuda.so")
    if os.path.exists(target):
        return target
    wheels = glob.glob(os.path.join(directory, "torch-2.14.1-*.whl"))
    if not wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", WHEEL, "--no-deps", "-d",
                        directory], check=True)
        wheels = glob.glob(os.path.join(directory, "torch-2.14.1-*.whl"))
    with zipfile.ZipFile(wheels[0]) as wheel, wheel.open(LIBRARY) as source, \
            open(target, "wb") as sink:
        while chunk := source.read(1 << 24):
            sink.write(chunk)
    return target


def main(argv: list[str] | None = None) -> int:
    from kernelcheck.corpus import plan_jobs, run_corpus

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/tmp/torchwheel")
    parser.add_argument("--file", help="a binary to run on instead of libtorch_cuda.so")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--limit", type=int, help="only the first N images (a sample)")
    parser.add_argument("--stage", choices=("ir", "structure"), default="ir")
    parser.add_argument("--jsonl", help="also write the per-kernel records here")
    parser.add_argument("--no-sharing", dest="share", action="store_false",
                        help="parse every kernel, also those with the same code as an "
                             "earlier one (kernelcheck.sharing)")
    parser.add_argument("--analyze", type=int, metavar="N",
                        help="idempotency analysis of the SASS of N images spread over "
                             "the library")
    parser.add_argument("--kernel-timeout", type=float, default=20.0,
                        help="seconds one kernel's analysis may take (--analyze)")
    parser.add_argument("--budget", type=float,
                        help="wall seconds for --analyze: report the images finished by then")
    args = parser.parse_args(argv)

    path = args.file or obtain_library(args.dir)
    if args.analyze:
        return analyze_sample(path, args.arch, args.analyze, args.jobs,
                              args.kernel_timeout, args.jsonl, args.budget)
    start = time.perf_counter()
    planned, _ = plan_jobs(path, args.arch)
    listing = time.perf_counter() - start
    total_images = len(planned)
    del planned
    print(f"{path}: {total_images} {args.arch} images listed (and decompressed) in "
          f"{listing:.1f} s")
    sink = open(args.jsonl, "w") if args.jsonl else None  # noqa: SIM115
    first_failures: dict[str, str] = {}

    instructions = 0

    def record(item) -> None:
        nonlocal instructions
        instructions += item.instructions
        if item.status != "ok" and item.cause not in first_failures:
            first_failures[item.cause] = f"{item.image} {item.kernel}: {item.error}"[:300]
        if sink is not None:
            sink.write(json.dumps(item.to_json()) + "\n")

    summary = run_corpus(path, arch=args.arch, jobs=args.jobs, stage=args.stage,
                         on_record=record, limit=args.limit, share=args.share)
    if sink is not None:
        sink.close()
    worker = summary.nvdisasm_seconds + summary.parse_seconds + summary.analysis_seconds
    ok = summary.kernels - summary.kernels_failed
    print(f"stage {args.stage}, {args.jobs} jobs: {summary.images} images, "
          f"{summary.kernels} kernels in {summary.seconds:.1f} s wall "
          f"({summary.seconds / 60:.1f} min)")
    print(f"  {summary.images / summary.seconds:.2f} images/s, "
          f"{summary.kernels / summary.seconds:.1f} kernels/s, "
          f"{instructions / summary.seconds:,.0f} instructions/s of parsed kernels "
          f"({instructions:,} in all)")
    if worker:
        print(f"  worker time {worker:.1f} s: nvdisasm {summary.nvdisasm_seconds:.1f} s "
              f"({100 * summary.nvdisasm_seconds / worker:.0f}%), parse "
              f"{summary.parse_seconds:.1f} s ({100 * summary.parse_seconds / worker:.0f}%), "
              f"analysis {summary.analysis_seconds:.1f} s")
    print(f"  kernels parsed {ok}, failed {summary.kernels_failed}; "
          f"images failed {summary.images_failed}; records shared with a kernel of the "
          f"same code {summary.kernels_shared}")
    for cause, count in summary.causes.most_common():
        print(f"    {count:6d}  {cause}: e.g. {first_failures.get(cause, '')}")
    if args.limit is not None and summary.images and summary.images < total_images:
        scale = total_images / summary.images
        print(f"  extrapolated to all {total_images} images (sample of {summary.images}): "
              f"about {summary.seconds * scale / 60:.1f} min wall, "
              f"{summary.kernels * scale:.0f} kernels")
    return 0


def _reason_kind(reason: str) -> str:
    """A reason without instruction numbers, offsets and names, for grouping.

    >>> _reason_kind("unknown instruction CALL.REL.NOINC /*0040*/ in k: "
    ...              "recursive call of $k$f")
    'unknown instruction CALL: recursive call of $f'
    >>> _reason_kind("write at an unknown address: STG.E.128 /*0930*/, line 12")
    'write at an unknown address: STG'
    """
    import re

    text = reason.split(";")[0]
    found = re.match(r"(unknown|unmodelled) instruction (\S+) (?:#\d+|/\*[0-9a-f]+\*/)"
                     r"(?:, line \d+)? in \S+?(?: \(line \d+\))?(?:: (.*))?$", text)
    if found:
        opcode = found.group(2).split(".")[0]
        if opcode == "sass":  # a lifted instruction: the SASS opcode follows
            opcode = found.group(2).split(".")[1].upper() if "." in found.group(2) else opcode
        why = re.sub(r"\$\S+", "$f", found.group(3) or "")
        return (f"{found.group(1)} instruction {opcode}" + (f": {why}" if why else ""))[:90]
    text = re.sub(r"/\*[0-9a-f]+\*/(, line \d+)?", "#k", text)
    text = re.sub(r"#\d+", "#k", text)
    text = re.sub(r" in \S+( \(line \d+\))?$", "", text)
    text = re.sub(r"\b(ld|st|atom|red)\.[a-z0-9.]+ #k.*", r"\1", text)
    text = re.sub(r"(: [A-Z][A-Z0-9_]*)(\.[A-Z0-9_.]+)? #k.*", r"\1", text)
    return text[:90]


def _analyze_job(job_and_timeout):
    """Analyse every kernel of one cubin image: ``[(kernel, class, reason, seconds)]``.

    Each kernel's analysis runs under :func:`kernelcheck.analysis.budget.within_budget`, as
    ``kernelcheck analyze --kernel-timeout`` runs it (the stop is raised only inside the
    analysis, and the state it leaves is put back)."""
    from kernelcheck.analysis.budget import BudgetExceeded, within_budget
    from kernelcheck.sass.analysis import analyze_sass_kernel
    from kernelcheck.sass.loader import load_cubin_sass

    job, timeout = job_and_timeout
    rows = []
    try:
        image = load_cubin_sass(job.data, job.image)
    except Exception as error:  # noqa: BLE001 - the image is reported, not the run
        return [(None, "image_failed", f"{type(error).__name__}", 0.0)]
    for failure in image.failures:
        rows.append((failure.name, "not_proven", f"SASS not parsed: {failure.cause}", 0.0))
    for kernel in image.module.kernels:
        start = time.perf_counter()
        try:
            summary = within_budget(
                lambda k=kernel: analyze_sass_kernel(image.module, k), timeout)
            kind, reason = summary.kernel_class, (
                _reason_kind(summary.reasons[0]) if summary.kernel_class == "not_proven"
                and summary.reasons else "")
        except BudgetExceeded:
            kind, reason = "not_proven", f"analysis over {timeout:g} s"
        except Exception as error:  # noqa: BLE001 - a fault of ours, counted
            kind, reason = "not_proven", f"analysis fault: {type(error).__name__}"
        rows.append((kernel.name, kind, reason, time.perf_counter() - start))
    return rows


def analyze_sample(path: str, arch: str, count: int, jobs: int, timeout: float,
                   jsonl: str | None, budget: float | None = None) -> int:
    """The ``--analyze`` run (see the module documentation)."""
    import statistics
    from collections import Counter
    from multiprocessing import Pool

    from kernelcheck.corpus import plan_jobs

    planned, _ = plan_jobs(path, arch)
    cubins = [j for j in planned if j.kind == "cubin"]
    step = max(len(cubins) / max(count, 1), 1.0)
    sample = [cubins[int(k * step)] for k in range(min(count, len(cubins)))]
    # Visit the sample in a coarse-to-fine order (halves, then quarters, ...), so that the
    # images finished within --budget are still spread over the whole library.
    order = sorted(range(len(sample)), key=lambda k: (int(f"{k:08b}"[::-1], 2), k))
    sample = [sample[k] for k in order]
    start = time.perf_counter()
    rows = []
    done = 0
    sink = open(jsonl, "w") if jsonl else None  # noqa: SIM115
    # Results are kept image by image as they arrive, so a run stopped by --budget still
    # reports every image it finished.
    pool = Pool(jobs)
    try:
        for result in pool.imap_unordered(_analyze_job, [(j, timeout) for j in sample]):
            done += 1
            for name, kind, reason, seconds in result:
                if name is None:
                    continue
                rows.append((name, kind, reason, seconds))
                if sink is not None:
                    sink.write(json.dumps({"kernel": name, "class": kind, "reason": reason,
                                           "seconds": round(seconds, 4)}) + "\n")
            if sink is not None:
                sink.flush()
            sys.stderr.write(f"\r{done}/{len(sample)} images, {len(rows)} kernels ")
            if budget and time.perf_counter() - start > budget:
                break
    finally:
        pool.terminate()
        if sink is not None:
            sink.close()
    wall = time.perf_counter() - start
    classes = Counter(r[1] for r in rows)
    reasons = Counter(r[2] for r in rows if r[1] == "not_proven")
    times = sorted(r[3] for r in rows if r[3] > 0)
    total = len(rows)
    print(f"\n{path}: {done} of {len(cubins)} {arch} cubin images (evenly spread; "
          f"{len(sample)} planned), {total} kernels analysed in {wall:.0f} s wall with "
          f"{jobs} jobs")
    for kind in ("always", "conditional", "never", "not_proven"):
        n = classes.get(kind, 0)
        print(f"  {kind:12s} {n:6d}  {100 * n / max(total, 1):5.1f}%")
    definite = total - classes.get("not_proven", 0)
    print(f"  definite class: {100 * definite / max(total, 1):.1f}%")
    print("  not proven, by reason:")
    for reason, n in reasons.most_common(15):
        print(f"    {n:6d}  {reason}")
    if times:
        q90 = times[int(0.9 * (len(times) - 1))]
        print(f"  analysis time per kernel: median {1000 * statistics.median(times):.0f} ms, "
              f"90th percentile {1000 * q90:.0f} ms, max {times[-1]:.1f} s, "
              f"total {sum(times):.0f} s")
    if done and done < len(cubins):
        scale = len(cubins) / done
        print(f"  extrapolated to all {len(cubins)} images: about {total * scale:.0f} "
              f"kernels, {wall * scale / 60:.0f} min wall with {jobs} jobs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
