"""The re-execution oracle: does an instance called idempotent re-run to the same memory?

For each case (:mod:`kernelcheck.selftest.cases`) the instance is placed on the device
(:class:`~kernelcheck.selftest.device.DeviceImage`: its allocations between guard bytes) and
run from the same initial bytes four ways:

1. once (``single``), and once more from scratch (``single2``): two independent runs;
2. twice in a row (``twice``);
3. after a partial first run (``partial``): the kernel rewritten so that blocks at or above
   a drawn index exit at entry (:mod:`kernelcheck.selftest.partial`), then the full kernel.
   One-block grids have no partial run by blocks and skip it.

Then every allocation the pointer parameters point into is compared byte for byte, with the
guard bytes on each side. The instance's verdict comes from the analysis (the PTX
LaunchCheck, or the SASS one in :mod:`kernelcheck.selftest.sass_check`) evaluated on the
parameter buffer and allocation table of the launch as the device ran it.

* A verdict of ``idempotent`` is **unsound** when ``twice`` or ``partial`` differs from
  ``single`` while ``single`` and ``single2`` agree: a failure, with a reproducer.
* When ``single`` and ``single2`` differ, the outputs depend on the order of atomics or
  races: the case is reported apart, whatever its verdict.
* Guard bytes that changed in any run are a failure (a write outside the instance's
  allocations, which the analysis assumes never happens), as is a launch the device fails.
* For instances not called idempotent, the number whose re-runs changed memory is the
  measured precision of those verdicts: the rest re-ran to the same bytes here (they may
  still clobber from other partial states or other contents).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kernelcheck.errors import KernelcheckError
from kernelcheck.selftest.cases import (
    InvalidCase,
    Materialized,
    NotRelocatable,
    kernels_without_workload,
    materialize,
)
from kernelcheck.selftest.context import SectionContext
from kernelcheck.selftest.device import DeviceCallError, DeviceImage
from kernelcheck.selftest.partial import rewrite_early_exit
from kernelcheck.selftest.results import SectionResult

__all__ = ["run", "check_cases", "ptx_verdict", "ptx_loader", "Outcome", "Loader"]

#: ``loader(device, mat) -> (full_function, partial(first_exiting) -> function)``
Loader = Callable
#: ``verdict(mat, params_bytes, allocations) -> (verdict, decided_by)``
VerdictFn = Callable


@dataclass(slots=True)
class Outcome:
    """What the runs of one case showed."""

    verdict: str
    decided_by: str
    deterministic: bool
    rerun_differs: bool
    partial_differs: bool | None
    first_exiting: int | None
    guard_broken: tuple[str, ...]
    differing_bytes: int
    faulted: tuple[str, ...] = ()


_SUMMARIES: dict = {}


def ptx_verdict(mat: Materialized, params: bytes, allocations) -> tuple[str, str]:
    """The PTX analysis' verdict of the instance as launched (its LaunchCheck)."""
    from kernelcheck.analysis.summary import analyze_kernel
    from kernelcheck.launch.evaluate import evaluate

    key = (str(mat.ptx), mat.entry)
    summary = _SUMMARIES.get(key)
    if summary is None:
        summary = _SUMMARIES[key] = analyze_kernel(mat.module, mat.function)
    v = evaluate(summary.launch_check, params, mat.case.grid, mat.case.block, allocations)
    return v.verdict, v.decided_by


def ptx_loader(device, mat: Materialized):
    """The kernel from its PTX file, and the early-exit variants from its rewrite."""
    full = device.function(device.load_ptx(mat.ptx.read_text()), mat.entry)

    def partial(first_exiting: int):
        text = rewrite_early_exit(mat.module, mat.entry, first_exiting)
        return device.function(device.load_ptx(text), mat.entry)
    return full, partial


def _differing(a, b) -> int:
    return sum(int(np.count_nonzero(np.frombuffer(x, np.uint8) != np.frombuffer(y, np.uint8)))
               for x, y in zip(a, b, strict=True))


def rerun_faults(mat: Materialized, first_exiting: int | None) -> tuple[str, ...]:
    """Which re-runs (``twice``, ``partial``) fault on the emulator.

    A re-run of an instance that clobbers may read what its first run wrote (an index
    overwritten by floats) and access memory out of bounds. On a GPU such a fault ends the
    context, so re-runs of instances not called idempotent are tried on the emulator first,
    and those that fault there are not sent to the device: having faulted, they changed
    behaviour when re-run.
    """
    from kernelcheck.emu import Emulator
    from kernelcheck.emu.instances import param_values

    values = param_values(mat.param_names, mat.params)
    kw = {"grid": mat.case.grid, "block": mat.case.block, "params": values,
          "shared_bytes": mat.shared_bytes}
    emu = Emulator()
    for lo, data in mat.regions:
        emu.memory.alloc_at(lo, len(data))
    for lo, data in mat.regions:
        emu.copy_htod(lo, np.frombuffer(data, np.uint8))
    initial = emu.memory.snapshot()
    full = emu.load_module(mat.module)
    sequences = [("twice", (full, full))]
    if first_exiting is not None:
        cut = emu.load_module(rewrite_early_exit(mat.module, mat.entry, first_exiting))
        sequences.append(("partial", (cut, full)))
    faulted = []
    for name, programs in sequences:
        emu.memory.restore(initial)
        try:
            for program in programs:
                emu.launch(program, mat.entry, **kw)
        except KernelcheckError:  # MemoryFault, LaunchError (trap), ...
            faulted.append(name)
    return tuple(faulted)


def run_case(device, mat: Materialized, verdict_fn: VerdictFn, loader: Loader,
             rng: np.random.Generator, assume_idempotent: bool = False) -> Outcome:
    """Run one case the four ways of the module docs and compare.

    Raises
    ------
    DeviceCallError
        A load, copy or launch failed on the device.
    """
    image = DeviceImage(device, mat.regions)
    try:
        params = mat.packed(mat.device_params(image))
        allocations = image.allocations()
        if assume_idempotent:
            verdict, decided_by = "idempotent", "assumed (--assume-idempotent)"
        else:
            verdict, decided_by = verdict_fn(mat, params, allocations)
        full, partial = loader(device, mat)
        grid, block = mat.case.grid, mat.case.block

        def launch(fn):
            device.launch(fn, grid, block, params, mat.offsets, mat.shared_bytes, mat.entry)

        def runs(*fns):
            image.upload()
            for fn in fns:
                launch(fn)
            return image.read()

        blocks = grid[0] * grid[1] * grid[2]
        first_exiting = int(rng.integers(1, blocks)) if blocks > 1 else None
        faulted = () if verdict == "idempotent" else rerun_faults(mat, first_exiting)
        single = runs(full)
        single2 = runs(full)
        twice = runs(full, full) if "twice" not in faulted else None
        partial_run = None
        if first_exiting is not None and "partial" not in faulted:
            partial_run = runs(partial(first_exiting), full)
        broken = tuple(name for name, snap in (("single", single), ("again", single2),
                                               ("twice", twice), ("partial", partial_run))
                       if snap is not None and image.guards_changed(snap))
        one = image.contents(single)
        deterministic = one == image.contents(single2)
        rerun = twice is None or image.contents(twice) != one
        part = True if "partial" in faulted else \
            None if partial_run is None else image.contents(partial_run) != one
        differing = max(_differing(one, image.contents(twice)) if twice is not None else 0,
                        _differing(one, image.contents(partial_run))
                        if partial_run is not None else 0)
        return Outcome(verdict, decided_by, deterministic, rerun, part, first_exiting,
                       broken, differing, faulted)
    finally:
        image.release()


def check_cases(ctx: SectionContext, result: SectionResult, verdict_fn: VerdictFn,
                loader: Loader, *, what: str, cases=None, materialize_fn=None) -> None:
    """Run ``cases`` (default: every case of ``ctx``) through the oracle; fill ``result``
    (see the module docs)."""
    device = ctx.device
    assumed = set(ctx.options.get("assume_idempotent") or ())
    counts = {"cases": 0, "invalid": 0, "idempotent": 0, "idempotent_confirmed": 0,
              "unsound": 0, "not_idempotent": 0, "not_proven": 0,
              "not_claimed_changed": 0, "not_claimed_deterministic": 0,
              "order_dependent": 0, "partial_runs": 0, "device_errors": 0,
              "not_relocatable": 0, "rerun_faults": 0}
    cases = ctx.cases() if cases is None else cases
    counts["planned"] = len(cases)
    order_dependent = []
    make = materialize_fn or (lambda case: materialize(
        ctx.root, case, driver_version=device.driver_version, arch=device.arch,
        seed=ctx.seed))
    for case in cases:
        if ctx.out_of_time():
            result.capped = True
            break
        try:
            mat = make(case)
        except NotRelocatable:
            counts["not_relocatable"] += 1
            continue
        except InvalidCase:
            counts["invalid"] += 1
            continue
        rng = np.random.default_rng([ctx.seed, counts["cases"]])
        extra = ("--assume-idempotent", case.name) if case.name in assumed else ()
        try:
            out = run_case(device, mat, verdict_fn, loader, rng, case.name in assumed)
        except (DeviceCallError, KernelcheckError) as error:
            counts["cases"] += 1
            counts["device_errors"] += 1
            result.fail(case.name, f"the device could not run it: {error}",
                        ctx.reproducer(case.name, *extra))
            if isinstance(error, DeviceCallError) and device.context_lost():
                result.notes.append(f"stopped after {case.name}: the device context is "
                                    f"lost (a sticky error); later cases not run")
                break
            continue
        counts["cases"] += 1
        counts["partial_runs"] += out.partial_differs is not None
        if out.guard_broken:
            result.fail(case.name, f"wrote outside its allocations (guard bytes changed in "
                                   f"the {', '.join(out.guard_broken)} run)",
                        ctx.reproducer(case.name, *extra))
            continue
        changed = out.rerun_differs or bool(out.partial_differs)
        if not out.deterministic:
            counts["order_dependent"] += 1
            order_dependent.append(case.name)
            result.passed += 1
            continue
        if out.verdict == "idempotent":
            counts["idempotent"] += 1
            if changed:
                counts["unsound"] += 1
                how = "run twice" if out.rerun_differs else \
                    f"run after a partial run (blocks >= {out.first_exiting} exited)"
                result.fail(case.name, f"unsound: called idempotent ({out.decided_by}) but "
                                       f"{how} it leaves {out.differing_bytes} bytes "
                                       f"different from one run (two single runs agree)",
                            ctx.reproducer(case.name, *extra))
                continue
            counts["idempotent_confirmed"] += 1
        else:
            counts[out.verdict if out.verdict in ("not_idempotent", "not_proven")
                   else "not_proven"] += 1
            counts["not_claimed_deterministic"] += 1
            counts["not_claimed_changed"] += changed
            counts["rerun_faults"] += bool(out.faulted)
        result.passed += 1
    not_claimed = counts["not_claimed_deterministic"]
    changed = counts["not_claimed_changed"]
    share = f"{changed / not_claimed:.0%}" if not_claimed else "-"
    result.figures.update(counts)
    result.figures["not_claimed_changed_share"] = changed / not_claimed if not_claimed else None
    result.summary = (f"{what}: {counts['cases']} instances run; {counts['idempotent']} "
                      f"called idempotent, {counts['unsound']} unsound; {not_claimed} not "
                      f"called idempotent, {changed} of them changed memory when re-run "
                      f"({share}; {counts['rerun_faults']} by faulting); "
                      f"{counts['order_dependent']} order-dependent")
    if counts["invalid"] or counts["not_relocatable"]:
        result.notes.append(f"not run: {counts['invalid']} drawn instances "
                            f"invalid for their kernel, {counts['not_relocatable']} whose "
                            f"pointers reach allocations at fixed distances (index "
                            f"arithmetic wrapping at 2^32)")
    if order_dependent:
        result.notes.append(f"order-dependent outputs (two single runs differ: atomics or "
                            f"races), not judged: {', '.join(order_dependent[:12])}"
                            + (" ..." if len(order_dependent) > 12 else ""))
    missing = kernels_without_workload(ctx.root)
    if missing:
        result.notes.append(f"expected.toml kernels with no workload to run them (not "
                            f"checked): {', '.join(missing)}")
    if result.capped:
        result.notes.append(f"time cap reached after {counts['cases']} of "
                            f"{len(cases)} instances")


def run(ctx: SectionContext) -> SectionResult:
    """The ``reexec`` section: PTX verdicts through the re-execution oracle."""
    result = SectionResult("reexec")
    check_cases(ctx, result, ptx_verdict, ptx_loader, what="PTX verdicts")
    return result.finish()
