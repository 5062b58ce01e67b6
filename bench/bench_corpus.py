"""Benchmark: the sm_90 SASS of PyTorch's libtorch_cuda.so parsed into the Kernel IR.

Not part of CI. It obtains the PyTorch CUDA wheel with
``pip download torch==2.14.1 --no-deps -d DIR`` (pip takes it from the local disk where a
constraints file or a wheel cache holds it), extracts ``torch/lib/libtorch_cuda.so``, and
runs :func:`kernelcheck.corpus.run_corpus` on it for one architecture. It prints images/s,
kernels/s, the share of worker time spent in nvdisasm, and the kernels parsed and failed
with failures grouped by cause. ``--limit N`` runs the first N images only (a measured
sample) and extrapolates to the whole corpus, saying so.

Usage::

    python bench/bench_corpus.py [--dir /tmp/torchwheel] [--arch sm_90] [--jobs N]
                                 [--limit N] [--stage ir|structure] [--jsonl out.jsonl]
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
    args = parser.parse_args(argv)

    path = args.file or obtain_library(args.dir)
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
                         on_record=record, limit=args.limit)
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
          f"images failed {summary.images_failed}")
    for cause, count in summary.causes.most_common():
        print(f"    {count:6d}  {cause}: e.g. {first_failures.get(cause, '')}")
    if args.limit is not None and summary.images and summary.images < total_images:
        scale = total_images / summary.images
        print(f"  extrapolated to all {total_images} images (sample of {summary.images}): "
              f"about {summary.seconds * scale / 60:.1f} min wall, "
              f"{summary.kernels * scale:.0f} kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
