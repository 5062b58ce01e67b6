"""Benchmark: scale-out executors on the libtorch_cuda.so sm_90 corpus and on tiny tasks.

Not part of CI. In one run, on the same images:

1. the local process pool (``--jobs`` processes) and a Dask ``LocalCluster`` of as many
   worker processes analyse the same sample of the libtorch_cuda.so sm_90 images
   (:func:`kernelcheck.corpus.run_corpus`, stage ``ir``: nvdisasm, then parsing into the
   Kernel IR); it prints images/s and kernels/s of each and their ratio, and checks the two
   runs produced the same records;
2. the scheduling overhead per task: many tiny tasks (one small PTX kernel each, stage
   ``ir``) run in this process, on the pool and on Dask; overhead per task is
   ``(wall * workers - in-process time) / tasks``.

The library comes from the PyTorch wheel as in bench/bench_corpus.py. ``--limit N`` takes the
first N images (a measured sample; the whole sm_90 corpus needs about 13 core-minutes of
nvdisasm alone).

Usage::

    python bench/bench_scale.py [--dir /tmp/torchwheel] [--limit 60] [--jobs 2]
                                [--tiny 400]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _corpus(path, arch, limit, executor):
    from kernelcheck.corpus import run_corpus

    records = []
    start = time.perf_counter()
    summary = run_corpus(path, arch=arch, stage="ir", limit=limit, progress=False,
                         on_record=records.append, executor=executor)
    wall = time.perf_counter() - start
    key = sorted((r.image, r.kernel or "", r.status, r.instructions) for r in records)
    return summary, wall, key


def _tiny_tasks(n):
    from kernelcheck.corpus import ImageJob, corpus_tasks

    text = (b".version 8.0\n.target sm_90\n.address_size 64\n"
            b".visible .entry tiny(.param .u64 p)\n{\n.reg .b64 %rd<3>;\n.reg .b32 %r<2>;\n"
            b"ld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\n"
            b"mov.u32 %r1, 1;\nst.global.u32 [%rd2], %r1;\nret;\n}\n")
    jobs = [ImageJob("tiny.ptx", f"copy{k}", "sm_90", "ptx", text) for k in range(n)]
    return list(corpus_tasks(jobs, "ir"))


def _drain(executor, tasks) -> float:
    start = time.perf_counter()
    results = list(executor.run(tasks))
    assert len(results) == len(tasks) and all(r.ok for r in results)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    from bench_corpus import obtain_library

    from kernelcheck.corpus import plan_jobs
    from kernelcheck.executor import LocalExecutor
    from kernelcheck.executor.dask_cluster import DaskExecutor

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/tmp/torchwheel")
    parser.add_argument("--file", help="a binary to run on instead of libtorch_cuda.so")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--limit", type=int, default=60, help="images of the sample")
    parser.add_argument("--tiny", type=int, default=400, help="tiny tasks for the overhead")
    args = parser.parse_args(argv)

    path = args.file or obtain_library(args.dir)
    start = time.perf_counter()
    planned, _ = plan_jobs(path, args.arch)
    total = len(planned)
    del planned
    print(f"{path}: {total} {args.arch} images listed in {time.perf_counter() - start:.1f} s;"
          f" sample: the first {min(args.limit, total)}")
    print(f"{os.cpu_count()} cores; {args.jobs} workers for each executor")

    local = LocalExecutor(args.jobs)
    start = time.perf_counter()
    dask = DaskExecutor.from_local_cluster(args.jobs)
    dask_start = time.perf_counter() - start
    try:
        rows = []
        for name, executor in (("local pool", local), ("dask LocalCluster", dask)):
            summary, wall, key = _corpus(path, args.arch, args.limit, executor)
            rows.append((name, summary, wall, key))
            print(f"  {name:18} {summary.images} images, {summary.kernels} kernels "
                  f"({summary.kernels_failed} failed) in {wall:.1f} s: "
                  f"{summary.images / wall:.2f} images/s, {summary.kernels / wall:.1f} "
                  f"kernels/s")
        same = rows[0][3] == rows[1][3]
        ratio = (rows[1][1].kernels / rows[1][2]) / (rows[0][1].kernels / rows[0][2])
        print(f"  dask / local throughput: {ratio:.2f}; records identical: {same}; "
              f"LocalCluster start-up {dask_start:.1f} s (not counted)")

        tasks = _tiny_tasks(args.tiny)
        inline = _drain(LocalExecutor(1), tasks)
        print(f"tiny tasks: {args.tiny}, {1e3 * inline / args.tiny:.2f} ms each in process")
        for name, executor in (("local pool", local), ("dask LocalCluster", dask)):
            _drain(executor, tasks[: 4 * args.jobs])  # warm the workers' imports
            wall = _drain(executor, tasks)
            overhead = (wall * args.jobs - inline) / args.tiny
            print(f"  {name:18} {wall:.2f} s, {args.tiny / wall:.0f} tasks/s, overhead "
                  f"{1e3 * overhead:.2f} ms per task")
    finally:
        dask.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
