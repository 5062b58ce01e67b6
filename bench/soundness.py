"""Soundness of the static verdicts against the emulator oracle, at scale.

Run: ``python bench/soundness.py [--instances 60] [--seed 1] [--flavours sm_80,sm_90,nvrtc]
[--sass [--compare-ptx]] [--sources tensor_lists.cu,...]``

For every fixture kernel and every PTX flavour, draws ``--instances`` random instances
(sizes, grid shapes and the six pointer placements in turn: disjoint, adjacent, aliased,
overlapping, offset, interleaved), runs each on the emulator with exact tracing (the oracle)
and asks the static analysis for its verdict. Prints the confusion matrix per kernel as a
markdown table, the false `idempotent` count (must be 0) and the false-negative rate (oracle
idempotent instances the analysis did not prove) beside the reference system's 18.54%.
Exits with status 1 when any false `idempotent` is found.

``--sass`` takes the verdicts from the SASS of the same kernels instead
(fixtures/cubin/<flavour>/, lifted by :mod:`kernelcheck.sass.lift`; flavours sm_80 and
sm_90): the emulator still runs the PTX as the oracle, and the SASS verdict provider gets
the same parameter buffer (the parameters by position). ``--compare-ptx`` asks the PTX
analysis of the same source as well and lists, per kernel, the instances the PTX analysis
proves idempotent and the SASS analysis does not (and the reverse).

``--metamorphic [--transforms rename,blocks,outline] [--seeds 3]`` instead rewrites every
fixture PTX file (all flavours under fixtures/ptx by default) with the meaning-keeping
transforms of :mod:`kernelcheck.ptx.metamorphic` and compares, before and after: each
kernel's class, each drawn instance's static verdict, the emulator's verdict and every
buffer after the run. Exits with status 1 on any change.

``--sources inline_asm.cu,inline_asm_libs.cu`` restricts every mode to the kernels of those
fixture sources.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kernelcheck.analysis.provider import verdict_provider  # noqa: E402
from kernelcheck.analysis.summary import analyze_kernel  # noqa: E402
from kernelcheck.emu.soundness import (  # noqa: E402
    PLACEMENTS,
    check_metamorphic,
    check_soundness,
    draw_instance,
)
from tests.emu.fixture_data import FIXTURES, entry_name, expected, module, ptx_files  # noqa: E402

REFERENCE_FN_RATE = 0.1854
#: ``--sources``: the fixture sources whose kernels run (empty: every source).
SOURCES: set[str] = set()


def _kernels() -> list[str]:
    return sorted(k for k in expected() if not SOURCES or expected()[k]["source"] in SOURCES)


def _path(kernel: str, flavour: str) -> Path | None:
    source = expected()[kernel]["source"]
    if not source.endswith(".cu"):
        return None
    path = FIXTURES / "ptx" / flavour / source.replace(".cu", ".ptx")
    return path if path.exists() else None


def _sass_module(path: Path):
    """The lifted SASS of the cubin built from the same source as the PTX ``path``."""
    from kernelcheck.sass.lift import lift_module
    from kernelcheck.sass.loader import load_cubin_sass

    cubin = FIXTURES / "cubin" / path.parent.name / (path.stem + ".cubin")
    if not cubin.exists():
        return None
    return lift_module(load_cubin_sass(cubin.read_bytes(), str(cubin)).module)


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--instances", type=int, default=60, help="instances per kernel")
    options.add_argument("--seed", type=int, default=1)
    options.add_argument("--flavours", default=None,
                         help="PTX flavours (default sm_80,sm_90,nvrtc; with --sass "
                              "sm_80,sm_90)")
    options.add_argument("--sass", action="store_true",
                         help="verdicts from the lifted SASS of fixtures/cubin/<flavour>")
    options.add_argument("--compare-ptx", action="store_true",
                         help="with --sass: also ask the PTX analysis of the same source, "
                              "and list the instances it proves idempotent and the SASS "
                              "analysis does not")
    options.add_argument("--metamorphic", action="store_true",
                         help="compare verdicts and emulated memory before and after "
                              "meaning-keeping PTX rewrites")
    options.add_argument("--transforms", default="rename,blocks,outline")
    options.add_argument("--seeds", type=int, default=3, help="seeds per transform")
    options.add_argument("--sources", default=None,
                         help="only the kernels of these fixture sources (comma-separated "
                              "file names under fixtures/src, e.g. inline_asm.cu)")
    args = options.parse_args()
    if args.sources:
        SOURCES.update(args.sources.split(","))
    if args.metamorphic:
        return metamorphic(args)
    if args.flavours is None:
        args.flavours = "sm_80,sm_90" if args.sass else "sm_80,sm_90,nvrtc"

    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    reports = []
    # (flavour, kernel) -> Counter of (PTX verdict, SASS verdict), with --compare-ptx.
    compared: dict[tuple[str, str], dict[tuple[str, str], int]] = {}
    for flavour in args.flavours.split(","):
        providers: dict[Path, object] = {}
        ptx_providers: dict[Path, object] = {}
        for kernel in _kernels():
            path = _path(kernel, flavour)
            if path is None:
                continue
            if path not in providers:
                names = {entry_name(path, k): expected()[k]["param_names"]
                         for k in expected() if _path(k, flavour) == path}
                source = _sass_module(path) if args.sass else module(path)
                providers[path] = verdict_provider(source, names) if source else None
            run = providers[path]
            if run is None:
                continue
            entry = entry_name(path, kernel)

            ptx = None
            if args.sass and args.compare_ptx:
                if path not in ptx_providers:
                    ptx_providers[path] = verdict_provider(module(path), names)
                ptx = ptx_providers[path]
            table = compared.setdefault((flavour, kernel), {})

            def provider(name, params, grid, block, allocations=(), run=run, entry=entry,
                         ptx=ptx, table=table):
                claim = run(entry, params, grid, block, allocations=allocations or None)
                if ptx is not None:
                    other = ptx(entry, params, grid, block, allocations=allocations or None)
                    key = (other, claim)
                    table[key] = table.get(key, 0) + 1
                return claim

            template = expected()[kernel]["instances"][0]
            instances = [draw_instance(kernel, template, rng, PLACEMENTS[k % len(PLACEMENTS)])
                         for k in range(args.instances)]
            report = check_soundness(
                instances, provider,
                module_for=lambda k, path=path: module(path),
                names_for=lambda k: expected()[k]["param_names"],
                entry_for=lambda k, path=path: entry_name(path, k))
            reports.append((flavour, kernel, report))
    seconds = time.perf_counter() - start

    totals = {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "skipped": 0}
    rows = ["| flavour | kernel | proven & idem | proven & NOT idem | not proven & idem | "
            "not proven & not idem | FN rate |", "|---|---|---:|---:|---:|---:|---:|"]
    for flavour, kernel, report in reports:
        c = next(iter(report.counts.values()), {})
        tp = c.get(("idempotent", "idempotent"), 0)
        fp = c.get(("idempotent", "not_idempotent"), 0)
        fn = c.get(("not_proven", "idempotent"), 0)
        tn = c.get(("not_proven", "not_idempotent"), 0)
        for key, value in (("tp", tp), ("fp", fp), ("fn", fn), ("tn", tn),
                           ("skipped", report.skipped)):
            totals[key] += value
        rate = f"{fn / (tp + fn):.1%}" if tp + fn else "-"
        rows.append(f"| {flavour} | {kernel} | {tp} | {fp} | {fn} | {tn} | {rate} |")
    idem = totals["tp"] + totals["fn"]
    rate = totals["fn"] / idem if idem else 0.0
    rows.append(f"| **total** | | {totals['tp']} | {totals['fp']} | {totals['fn']} | "
                f"{totals['tn']} | {rate:.1%} |")
    print("\n".join(rows))
    runs = sum(totals[k] for k in ("tp", "fp", "fn", "tn"))
    print(f"\ninstances run: {runs} (skipped as invalid for the kernel: {totals['skipped']}) "
          f"in {seconds:.0f} s")
    print(f"false idempotent: {totals['fp']}")
    if args.sass and args.compare_ptx:
        _print_comparison(compared)
    print(f"false-negative rate: {rate:.2%} (reference system: {REFERENCE_FN_RATE:.2%}); "
          f"oracle-idempotent instances: {idem}")
    return 1 if totals["fp"] else 0


def _print_comparison(compared) -> None:
    """Instances the PTX analysis proves idempotent and the SASS analysis does not (the
    SASS analysis should be at least as precise), and the reverse, per kernel."""
    weaker = {k: sum(n for (p, s), n in t.items() if p == "idempotent" and s != "idempotent")
              for k, t in compared.items()}
    stronger = {k: sum(n for (p, s), n in t.items() if s == "idempotent" and p != "idempotent")
                for k, t in compared.items()}
    both = sum(n for t in compared.values() for (p, s), n in t.items()
               if p == s == "idempotent")
    print(f"\nSASS against PTX: both idempotent {both}, "
          f"PTX only {sum(weaker.values())}, SASS only {sum(stronger.values())}")
    for (flavour, kernel), n in sorted(weaker.items()):
        if n:
            print(f"  PTX idempotent, SASS not: {flavour} {kernel}: {n}")
    for (flavour, kernel), n in sorted(stronger.items()):
        if n:
            print(f"  SASS idempotent, PTX not: {flavour} {kernel}: {n}")


def analyser(names: dict):
    """``analyse(module) -> (class_of, verdict_of)`` for :func:`check_metamorphic`."""

    def analyse(mod):
        provider = verdict_provider(mod, names)
        classes: dict = {}

        def class_of(entry):
            if entry not in classes:
                classes[entry] = analyze_kernel(mod, mod.get_function(entry)).kernel_class
            return classes[entry]

        def verdict_of(entry, inst, allocations):
            return provider(entry, inst.params, inst.grid, inst.block,
                            allocations=allocations or None)

        return class_of, verdict_of

    return analyse


def metamorphic(args) -> int:
    """The ``--metamorphic`` run: every fixture PTX file, every transform and seed."""
    rng = np.random.default_rng(args.seed)
    transforms = args.transforms.split(",")
    seeds = range(args.seeds)
    start = time.perf_counter()
    totals: dict = {}
    changes: list[str] = []
    skipped = 0
    files = kernels = 0
    for path in sorted((FIXTURES / "ptx").glob("*/*.ptx")):
        if args.flavours and path.parent.name not in args.flavours.split(","):
            continue
        if SOURCES and not any(path.stem == expected()[k]["source"].removesuffix(".cu")
                               or path in ptx_files(k) for k in _kernels()):
            continue
        members = _members(path)
        if not members:
            continue
        files += 1
        kernels += len(members)
        names = {entry_name(path, k): expected()[k]["param_names"] for k in members}
        instances = [draw_instance(kernel, expected()[kernel]["instances"][0], rng,
                                   PLACEMENTS[k % len(PLACEMENTS)])
                     for kernel in members for k in range(args.instances)]
        # One call per file: each rewritten module is analysed once for all its kernels.
        report = check_metamorphic(
            instances, module_for=lambda k, path=path: module(path),
            names_for=lambda k: expected()[k]["param_names"],
            entry_for=lambda k, path=path: entry_name(path, k),
            analyse=analyser(names), transforms=transforms, seeds=seeds)
        for key, value in report.checks.items():
            totals[key] = totals.get(key, 0) + value
        changes.extend(f"{path.relative_to(FIXTURES)}: {c}" for c in report.changes)
        skipped += report.skipped
    seconds = time.perf_counter() - start
    print(f"metamorphic: {files} PTX files, {kernels} kernels (file, kernel), transforms "
          f"{', '.join(transforms)}, {args.seeds} seed(s) each, {args.instances} instances "
          f"per kernel, {seconds:.0f} s")
    print("| comparison | made | changed |\n|---|---:|---:|")
    for key in ("class", "verdict", "oracle", "memory"):
        changed = sum(1 for c in changes if _kind(c) == key)
        print(f"| {key} | {totals.get(key, 0)} | {changed} |")
    print(f"instances skipped as invalid for the kernel: {skipped}")
    for line in changes[:50]:
        print("  " + line)
    return 1 if changes else 0


def _members(path: Path) -> list[str]:
    """The expected.toml kernels defined in ``path`` (every flavour of a CUDA source, -G
    and NVRTC 12 builds included)."""
    entries = {k.name for k in module(path).kernels}
    out = []
    for kernel in _kernels():
        source = expected()[kernel]["source"]
        if source.endswith(".cu"):
            if path.stem == source[:-3] and kernel in entries:
                out.append(kernel)
        elif path in ptx_files(kernel):
            out.append(kernel)
    return out


def _kind(change: str) -> str:
    if ": class " in change:
        return "class"
    if "emulator verdict" in change:
        return "oracle"
    if "buffer" in change:
        return "memory"
    return "verdict"


if __name__ == "__main__":
    sys.exit(main())
