"""The emulator against the device: the same instances, the same initial bytes, equal outputs.

Each case is placed once (:func:`kernelcheck.selftest.cases.materialize`, which also runs it
on :class:`kernelcheck.emu.Emulator` directly from the initial bytes) and run twice on the
device from the same bytes. The allocations must come back equal byte for byte, except:

* in kernels that use instructions whose results the PTX ISA leaves approximate
  (:data:`APPROXIMATE`, with the precision the ISA states), float elements are compared
  with a relative tolerance derived from the worst stated error (the emulator computes them
  in float64 and rounds once, more accurately than the hardware);
* bytes the emulator's trace shows as clobbered (read and written by the instance) or
  touched by an atomic, when they differ, or when the two device runs differ: their values
  depend on the order threads ran in, which the ISA leaves open. Such cases are reported
  apart, not as failures.

A case here is anything with the attributes of
:class:`~kernelcheck.selftest.cases.Materialized` that this module reads (``ptx``, ``entry``,
``regions``, ``emulated``, ``trace``, ``packed``, ``device_params``, ``offsets``, ``case``,
``shared_bytes``).

The conformance suite's launch files (``tests/conformance/cases/<group>/<name>.launch.json``
beside the fixture corpus, docs/launch-files.md) run the same way through
:func:`compare_launch_file`: on the emulator and twice on the device through the launch-file
runner (:mod:`kernelcheck.launchfile`), outputs equal byte for byte, or within the tolerance
the launch file states for instructions the ISA leaves approximate.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from kernelcheck.errors import KernelcheckError, UnsupportedFeature
from kernelcheck.selftest.cases import InvalidCase, NotRelocatable, materialize
from kernelcheck.selftest.context import SectionContext
from kernelcheck.selftest.device import DeviceCallError, DeviceImage
from kernelcheck.selftest.results import SectionResult

__all__ = ["APPROXIMATE", "approximate_in", "compare_case", "compare_launch_file",
           "conformance_launch_files", "run", "within_tolerance"]

#: Instructions whose results the PTX ISA leaves approximate, with the precision it states
#: (PTX ISA 9.7.3, "Floating-Point Instructions", each instruction's page) as
#: (kind, bound): "ulp" in units in the last place, "rel" a relative error, "abs" an
#: absolute error.
APPROXIMATE = {
    "rcp.approx.f32": ("ulp", 1.0),
    "div.approx.f32": ("ulp", 2.0),
    "div.full.f32": ("ulp", 2.0),
    "sqrt.approx.f32": ("rel", 2.0 ** -23),
    "rsqrt.approx.f32": ("rel", 2.0 ** -22.9),
    "ex2.approx.f32": ("rel", 2.0 ** -22),
    "lg2.approx.f32": ("abs", 2.0 ** -22.6),
    "sin.approx.f32": ("abs", 2.0 ** -20.9),
    "cos.approx.f32": ("abs", 2.0 ** -20.9),
    "tanh.approx.f32": ("rel", 2.0 ** -10.987),
}
#: Bound used for an ``.approx`` instruction the table does not list (f16, bf16, f64 forms).
_UNLISTED = ("rel", 2.0 ** -10)
#: How much a stated error may grow through the arithmetic after it (a few dependent
#: operations); the comparison is a plausibility check, not an error analysis.
_PROPAGATION = 64.0
_APPROX_RE = re.compile(r"\b((?:rcp|sqrt|rsqrt|ex2|lg2|sin|cos|tanh|div)\.(?:approx|full)"
                        r"(?:\.ftz)?\.[a-z0-9]+)")


def approximate_in(ptx_text: str) -> dict[str, tuple[str, float]]:
    """The approximate instructions a PTX text uses, with their stated precision.

    >>> approximate_in("ex2.approx.ftz.f32 %f2, %f1; add.f32 %f3, %f2, %f2;")
    {'ex2.approx.f32': ('rel', 4.76837158203125e-07)}
    """
    found = {}
    for name in _APPROX_RE.findall(ptx_text):
        key = name.replace(".ftz", "")
        found[key] = APPROXIMATE.get(key, _UNLISTED)
    return found


def _relative_tolerance(found: dict) -> float:
    worst = 0.0
    for kind, bound in found.values():
        worst = max(worst, bound * 2.0 ** -23 if kind == "ulp" else bound)
    return worst * _PROPAGATION


def within_tolerance(device: bytes, emulated: bytes, rtol: float) -> bool:
    """Whether two allocations' bytes agree as float32 values within ``rtol`` (relative,
    with an absolute floor of ``rtol`` for values near zero); a length that is not a multiple
    of 4 compares exactly."""
    if len(device) % 4 or len(device) != len(emulated):
        return device == emulated
    a = np.frombuffer(device, np.float32).astype(np.float64)
    b = np.frombuffer(emulated, np.float32).astype(np.float64)
    return bool(np.all(np.isclose(a, b, rtol=rtol, atol=rtol, equal_nan=True)))


def _order_dependent_bytes(mat) -> list[tuple[int, int]]:
    ranges = list(mat.trace.clobbered.ranges)
    for atomic in mat.trace.atomics:
        ranges += [(a, a + atomic.width) for a in atomic.addresses]
    return ranges


def _differences(mat, device_bytes) -> list[int]:
    out = []
    for (lo, _), dev, emu in zip(mat.regions, device_bytes, mat.emulated, strict=True):
        d = np.frombuffer(dev, np.uint8)
        e = np.frombuffer(emu, np.uint8)
        out += [lo + int(k) for k in np.flatnonzero(d != e)]
    return out


def compare_case(device, mat) -> tuple[str, str]:
    """Run ``mat`` twice on the device and compare with the emulator's bytes.

    Returns
    -------
    (status, detail)
        ``equal``, ``approximate`` (equal within the stated precision of the approximate
        instructions it uses), ``order`` (differences only where the order of threads
        decides) or ``different``; the detail says where.
    """
    text = mat.ptx.read_text()
    fn = device.function(device.load_ptx(text), mat.entry)
    image = DeviceImage(device, mat.regions)
    try:
        params = mat.packed(mat.device_params(image))
        results = []
        for _ in range(2):
            image.upload()
            device.launch(fn, mat.case.grid, mat.case.block, params, mat.offsets,
                          mat.shared_bytes, mat.entry)
            results.append(image.contents(image.read()))
    finally:
        image.release()
    first, second = results
    if list(first) == list(mat.emulated):
        return "equal", ""
    found = approximate_in(text)
    if found and all(within_tolerance(d, e, _relative_tolerance(found))
                     for d, e in zip(first, mat.emulated, strict=True)):
        return "approximate", ", ".join(sorted(found))
    diffs = _differences(mat, first)
    order = _order_dependent_bytes(mat)
    if first != second or all(any(a <= x < b for a, b in order) for x in diffs):
        return "order", f"{len(diffs)} bytes differ, all clobbered or atomic"
    where = diffs[0]
    k = next(i for i, (lo, data) in enumerate(mat.regions) if lo <= where < lo + len(data))
    off = where - mat.regions[k][0]
    return "different", (f"{len(diffs)} bytes differ; first at allocation {k} + {off:#x}: "
                         f"device {first[k][off]:#04x}, emulator {mat.emulated[k][off]:#04x}")


def conformance_launch_files(root: Path) -> list[tuple[Path, Path]]:
    """(PTX, launch file) of every conformance case beside the fixture corpus ``root``.

    ``<name>.launch.json`` runs ``<name>.ptx``; several launch files of one module
    (``<module>.<kernel>.launch.json``) share ``<module>.ptx``.
    """
    cases = root.parent / "tests" / "conformance" / "cases"
    found = []
    for launch in sorted(cases.glob("*/*.launch.json")):
        name = launch.name[: -len(".launch.json")]
        ptx = launch.with_name(f"{name}.ptx")
        if not ptx.exists() and "." in name:
            ptx = launch.with_name(f"{name.split('.', 1)[0]}.ptx")
        if ptx.exists():
            found.append((ptx, launch))
    return found


def compare_launch_file(ptx: Path, launch: Path) -> tuple[str, str]:
    """Run one launch file on the emulator and twice on the device, and compare.

    Returns
    -------
    (status, detail)
        ``equal``; ``approximate`` (the device differs from the emulator only within the
        tolerances the launch file's expectations state); ``order`` (the two device runs
        differ: the result depends on thread order); ``unsupported`` (the emulator does not
        run it); ``not_loadable`` (the device's driver rejects the module); or
        ``different``, with the first differing buffer and byte.
    """
    from kernelcheck.launchfile import (
        GpuUnavailable,
        check_expectation,
        load_launch_file,
        load_program,
        run_on_emulator,
        run_on_gpu,
    )

    spec = load_launch_file(launch)
    program = load_program(ptx, spec.kernel)
    try:
        emulated = run_on_emulator(program, spec)
    except UnsupportedFeature as error:
        return "unsupported", str(error)
    try:
        first, second = run_on_gpu(program, spec), run_on_gpu(program, spec)
    except GpuUnavailable as error:
        return "not_loadable", str(error)
    if first == emulated:
        return "equal", ""
    if first != second:
        return "order", "two device runs differ"
    differing = [name for name in emulated if first.get(name) != emulated[name]]
    tolerant = {e.buffer: e for e in spec.expectations if e.ulp or e.abs or e.rel}
    if all(name in tolerant and not check_expectation(tolerant[name], first[name])
           for name in differing):
        return "approximate", ", ".join(differing)
    name = differing[0]
    at = next(k for k, (a, b) in enumerate(zip(first[name], emulated[name], strict=False))
              if a != b)
    return "different", (f"buffer {name} byte {at}: device {first[name][at]:#04x}, emulator "
                         f"{emulated[name][at]:#04x}")


def _run_launch_files(ctx: SectionContext, result: SectionResult) -> None:
    files = conformance_launch_files(ctx.root)
    if ctx.quick:
        files = files[::4]
    counts = {"equal": 0, "approximate": 0, "order": 0, "different": 0, "unsupported": 0,
              "not_loadable": 0, "invalid": 0}
    done = 0
    for ptx, launch in files:
        if ctx.out_of_time():
            result.capped = True
            break
        name = f"{launch.parent.name}/{launch.name[: -len('.launch.json')]}"
        try:
            status, detail = compare_launch_file(ptx, launch)
        except KernelcheckError as error:
            counts["invalid"] += 1
            result.notes.append(f"launch file {name} not run: {error}")
            continue
        done += 1
        counts[status] += 1
        if status == "different":
            result.fail(name, f"emulator and device disagree: {detail}",
                        f"kernelcheck emulate {ptx} --launch {launch} --backend both")
        elif status in ("equal", "approximate", "order"):
            result.passed += 1
    result.figures["launch_files"] = counts
    if files:
        result.notes.append(
            f"{done} conformance launch files on device and emulator: {counts['equal']} equal, "
            f"{counts['approximate']} within stated precision, {counts['order']} "
            f"order-dependent, {counts['different']} different, {counts['unsupported']} not "
            f"run by the emulator, {counts['not_loadable']} not loadable by the driver")
    else:
        result.notes.append("no conformance launch files beside the fixture corpus")


def run(ctx: SectionContext) -> SectionResult:
    """The ``emulator`` section over the fixture instances and the conformance suite's
    launch files (see the module docs)."""
    result = SectionResult("emulator")
    device = ctx.device
    counts = {"equal": 0, "approximate": 0, "order": 0, "different": 0, "invalid": 0,
              "not_relocatable": 0, "errors": 0}
    approximate: dict = {}
    order = []
    cases = ctx.cases(random=False)
    for case in cases:
        if ctx.out_of_time():
            result.capped = True
            break
        try:
            mat = materialize(ctx.root, case, driver_version=device.driver_version,
                              arch=device.arch, seed=ctx.seed)
        except NotRelocatable:
            counts["not_relocatable"] += 1
            continue
        except InvalidCase:
            counts["invalid"] += 1
            continue
        try:
            status, detail = compare_case(device, mat)
        except DeviceCallError as error:
            counts["errors"] += 1
            result.fail(case.name, f"the device could not run it: {error}",
                        ctx.reproducer(case.name))
            if device.context_lost():
                result.notes.append(f"stopped after {case.name}: the device context is lost")
                break
            continue
        counts[status] += 1
        if status == "different":
            result.fail(case.name, f"emulator and device disagree: {detail}",
                        ctx.reproducer(case.name))
            continue
        if status == "approximate":
            approximate.update(approximate_in(mat.ptx.read_text()))
        if status == "order":
            order.append(case.name)
        result.passed += 1
    result.figures.update(counts)
    result.figures["approximate_instructions"] = {k: list(v) for k, v in approximate.items()}
    run_count = sum(counts[k] for k in ("equal", "approximate", "order", "different",
                                        "errors"))
    result.summary = (f"{run_count} fixture instances on device and emulator: "
                      f"{counts['equal']} byte-equal, {counts['approximate']} equal within "
                      f"the ISA's stated precision, {counts['order']} order-dependent, "
                      f"{counts['different']} different")
    listed = ", ".join(f"{k} ({kind} {bound:.3g})" for k, (kind, bound) in
                       sorted(approximate.items())) or "none in these kernels"
    result.notes.append(f"approximate instructions (ISA-stated precision): {listed}")
    if counts["not_relocatable"]:
        result.notes.append(f"{counts['not_relocatable']} instances not run: a "
                            f"pointer reaches allocations at fixed distances")
    if order:
        result.notes.append(f"order-dependent bytes differ (atomics or races): "
                            f"{', '.join(order[:12])}")
    if result.capped:
        result.notes.append(f"time cap reached after {run_count} of {len(cases)}")
    else:
        _run_launch_files(ctx, result)
    return result.finish()
