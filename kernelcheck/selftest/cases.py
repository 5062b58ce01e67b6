"""The kernel instances the self-test runs, placed and ready for the device and the emulator.

A :class:`Case` is one instance of a fixture kernel: an instance of fixtures/expected.toml
(``vec_add#2``), or one drawn by the soundness harness's generator
(:func:`kernelcheck.emu.soundness.draw_instance`) from a seed (``vec_add~r5``: the sixth draw
for that kernel, whose pointer placement is the sixth of
:data:`~kernelcheck.emu.soundness.PLACEMENTS` in turn). Names are stable: the draws of one
kernel depend only on the seed and the kernel's name, so ``--case NAME`` reproduces a case
alone.

:func:`materialize` places a case on a scratch emulator with the workload table
(:func:`kernelcheck.emu.instances.setup`: buffers at the addresses the instance names, valid
contents), runs it there once with tracing (a case that faults on the emulator is invalid
for its kernel and is not sent to a device, where an invalid access would end the context),
and keeps the allocations' initial bytes. On a device, allocations cannot be placed at chosen
addresses: :meth:`Materialized.device_params` moves every pointer by the offset of its
allocation, which keeps every overlap inside an allocation and its alignment (device
allocations are at least 256-byte aligned, as the emulator's are).

The PTX file of a kernel is the first of its flavours that the device can load: PTX ISA
9.0 (nvcc of CUDA 13, ``sm_80``) needs a CUDA 13 driver; ``nvrtc12`` (ISA 8.8) needs 12.9.
"""

from __future__ import annotations

import os
import re
import tomllib
import zlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from kernelcheck.emu.instances import param_values, pointer_value, setup, with_pointer
from kernelcheck.emu.workloads import get_workload
from kernelcheck.errors import KernelcheckError
from kernelcheck.ir.nodes import Function, Module
from kernelcheck.selftest.device import ptx_isa_min_driver

__all__ = ["Case", "Materialized", "fixtures_dir", "expected", "fixture_cases",
           "random_cases", "kernels_without_workload", "find_case", "ptx_file", "materialize",
           "InvalidCase", "NotRelocatable"]

_CU_FLAVOURS = ("sm_80", "nvrtc12", "sm_90", "nvrtc")
_NUMBA = ("scale_numba", "increment_numba", "histogram_numba")


class InvalidCase(KernelcheckError):
    """A drawn instance that is not valid for its kernel (negative sizes, accesses outside
    its buffers on the emulator), or a kernel no loadable PTX file defines."""


class NotRelocatable(InvalidCase):
    """An instance one of whose pointers reaches two allocations at a fixed distance (index
    arithmetic that wraps around 2^32 elements): a device gives allocations where it likes,
    so the distance cannot be kept."""


def fixtures_dir(override: str | os.PathLike | None = None) -> Path:
    """The fixture corpus: ``override``, ``$KERNELCHECK_FIXTURES``, the repository's
    ``fixtures/`` beside the package, or ``./fixtures``.

    Raises
    ------
    KernelcheckError
        None of them holds ``expected.toml``.
    """
    candidates = [override, os.environ.get("KERNELCHECK_FIXTURES"),
                  Path(__file__).resolve().parents[2] / "fixtures", Path.cwd() / "fixtures"]
    for c in candidates:
        if c and (Path(c) / "expected.toml").is_file():
            return Path(c).resolve()
    raise KernelcheckError("no fixture corpus found (fixtures/expected.toml): run from a "
                           "checkout of kernelcheck, or give --fixtures DIR")


@cache
def expected(root: Path) -> dict:
    """The ``[kernels]`` table of ``root/expected.toml``."""
    with open(root / "expected.toml", "rb") as f:
        return tomllib.load(f)["kernels"]


@dataclass(frozen=True, slots=True)
class Case:
    """One kernel instance to check (see the module docs)."""

    name: str
    kernel: str
    origin: str
    params: dict
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    allocations: tuple[tuple[int, int], ...] = ()
    expected_verdict: str = ""


def _dims(d) -> tuple[int, int, int]:
    return tuple(int(x) for x in d) + (1,) * (3 - len(d))


def _has_workload(kernel: str) -> bool:
    try:
        get_workload(kernel)
    except KeyError:
        return False
    return True


def kernels_without_workload(root: Path) -> list[str]:
    """Kernels of expected.toml that the workload table cannot run (no cases are made)."""
    return sorted(k for k in expected(root) if not _has_workload(k))


def fixture_cases(root: Path, kernels=None, per_kernel: int | None = None) -> list[Case]:
    """The instances of expected.toml (the first ``per_kernel`` of each kernel)."""
    out = []
    for kernel, spec in expected(root).items():
        if (kernels and kernel not in kernels) or not _has_workload(kernel):
            continue
        for k, inst in enumerate(spec["instances"][:per_kernel]):
            out.append(Case(f"{kernel}#{k}", kernel, "fixture", dict(inst["params"]),
                            _dims(inst["grid"]), _dims(inst["block"]),
                            tuple(tuple(a) for a in inst.get("allocations", ())),
                            inst.get("verdict", "")))
    return out


def random_cases(root: Path, per_kernel: int, seed: int, kernels=None) -> list[Case]:
    """``per_kernel`` instances of every kernel drawn by the soundness harness's generator,
    each placement in turn."""
    from kernelcheck.emu.soundness import PLACEMENTS, draw_instance

    out = []
    for kernel, spec in expected(root).items():
        if (kernels and kernel not in kernels) or not _has_workload(kernel):
            continue
        rng = np.random.default_rng([seed, zlib.crc32(kernel.encode())])
        template = spec["instances"][0]
        for k in range(per_kernel):
            try:
                inst = draw_instance(kernel, template, rng, PLACEMENTS[k % len(PLACEMENTS)])
            except (KernelcheckError, ValueError, KeyError, OverflowError):
                continue
            out.append(Case(f"{kernel}~r{k}", kernel, f"random:{inst.placement}",
                            dict(inst.params), _dims(inst.grid), _dims(inst.block)))
    return out


def find_case(root: Path, name: str, seed: int) -> Case:
    """The case called ``name`` (``KERNEL#N`` or ``KERNEL~rN``).

    Raises
    ------
    KernelcheckError
        No such kernel or instance.
    """
    match = re.fullmatch(r"(.+?)(#|~r)(\d+)", name)
    if not match or match.group(1) not in expected(root):
        raise KernelcheckError(f"--case {name}: expected KERNEL#N (an expected.toml "
                               f"instance) or KERNEL~rN (a drawn instance) of a fixture kernel")
    kernel, kind, number = match.group(1), match.group(2), int(match.group(3))
    pool = (fixture_cases(root, {kernel}) if kind == "#" else
            random_cases(root, number + 1, seed, {kernel}))
    for case in pool:
        if case.name == name:
            return case
    raise KernelcheckError(f"--case {name}: {kernel} has no such instance")


# ---------------------------------------------------------------------- PTX files
@cache
def _header(path: Path) -> tuple[str, str]:
    text = path.read_text(errors="replace")[:4000]
    version = re.search(r"^\s*\.version\s+(\d+\.\d+)", text, re.M)
    target = re.search(r"^\s*\.target\s+(sm_\d+[a-z]?)", text, re.M)
    return (version.group(1) if version else "0.0", target.group(1) if target else "sm_50")


def _loadable(path: Path, driver_version: int | None, arch: str | None) -> bool:
    version, target = _header(path)
    if driver_version is not None and ptx_isa_min_driver(version) > driver_version:
        return False
    if arch is not None:
        want = int(re.sub(r"\D", "", target))
        have = int(re.sub(r"\D", "", arch))
        if target.endswith("a") and want != have:  # arch-specific PTX runs on that arch only
            return False
        return want <= have
    return True


def ptx_candidates(root: Path, kernel: str) -> list[Path]:
    """Every PTX file that defines ``kernel``, in order of preference."""
    source = expected(root)[kernel]["source"]
    if source.endswith(".cu"):
        return [p for f in _CU_FLAVOURS if (p := root / "ptx" / f / f"{source[:-3]}.ptx").exists()]
    if source.startswith("triton"):
        return sorted((root / "ptx" / "triton").glob(f"{kernel}_sm*.ptx"))
    short = next((s for s in _NUMBA if s in kernel), None)
    return sorted((root / "ptx" / "numba").glob(f"{short}_sm*.ptx")) if short else []


def ptx_file(root: Path, kernel: str, driver_version: int | None = None,
             arch: str | None = None) -> Path:
    """The first PTX file of ``kernel`` a driver of ``driver_version`` loads on ``arch``.

    Raises
    ------
    InvalidCase
        No such file.
    """
    for path in ptx_candidates(root, kernel):
        if _loadable(path, driver_version, arch):
            return path
    raise InvalidCase(f"{kernel}: no PTX file the driver ({driver_version}) loads on {arch}")


@cache
def parsed(path: Path) -> Module:
    from kernelcheck.ptx.parser import parse_ptx_file
    return parse_ptx_file(path)


def entry_of(module: Module, kernel: str) -> Function:
    """The kernel's entry in ``module`` (numba names differ by target in one token)."""
    for f in module.kernels:
        if f.name == kernel:
            return f
    prefix = kernel.split("B2v")[0]
    for f in module.kernels:
        if f.name.startswith(prefix):
            return f
    raise InvalidCase(f"kernel {kernel} is not in {module.filename}")


# ---------------------------------------------------------------------- placement
@dataclass(slots=True)
class Materialized:
    """A case placed on the emulator: its allocations' initial bytes, launch arguments, the
    emulator's run of it (trace and final bytes) and what is needed to relocate it."""

    case: Case
    ptx: Path
    module: Module
    function: Function
    params: dict
    buffers: tuple
    regions: tuple[tuple[int, bytes], ...]
    param_names: tuple[str, ...]
    shared_bytes: int
    trace: object
    emulated: tuple[bytes, ...]

    @property
    def entry(self) -> str:
        return self.function.name

    @property
    def offsets(self) -> tuple[int, ...]:
        return tuple(p.offset for p in self.function.params)

    def packed(self, params: dict | None = None) -> bytes:
        """The parameter buffer for ``params`` (default: the emulator placement's)."""
        from kernelcheck.emu.emulator import pack_params
        values = param_values(self.param_names, self.params if params is None else params)
        return pack_params(self.function, values).tobytes()

    def device_params(self, image) -> dict:
        """The parameters with every pointer moved into ``image``'s device allocations."""
        out = dict(self.params)
        for buf in self.buffers:
            try:
                value = pointer_value(self.params, buf.pointer)
            except (KeyError, TypeError):
                continue
            size = np.dtype(buf.dtype).itemsize
            segments = buf.segments if buf.segments is not None else \
                (((buf.lo, buf.hi),) if buf.hi > buf.lo else ())
            probe = value + segments[0][0] * size if segments else value
            try:
                delta = image.device_address(probe) - probe
            except KeyError:
                if segments:
                    raise
                continue  # a pointer the instance never dereferences (an empty range)
            out = with_pointer(out, buf.pointer, value + delta)
        return out


def materialize(root: Path, case: Case, *, driver_version: int | None = None,
                arch: str | None = None, seed: int = 0) -> Materialized:
    """Place ``case`` on a scratch emulator, run it there, keep its initial bytes.

    Raises
    ------
    InvalidCase
        The instance is invalid for its kernel, or no loadable PTX file defines it.
    """
    from kernelcheck.emu import Emulator, MemoryFault
    from kernelcheck.emu.executor import LaunchError

    spec = expected(root)[case.kernel]
    path = ptx_file(root, case.kernel, driver_version, arch)
    module = parsed(path)
    function = entry_of(module, case.kernel)
    params = dict(case.params)
    for name in [k for k, v in params.items() if isinstance(v, list)]:
        # a struct whose pointer field is 0 lets the workload place that buffer itself
        if all(x == 0 for o, s, x in params[name] if o == 0):
            params[name] = [[o, s, x] for o, s, x in params[name] if o != 0]
    emu = Emulator()
    wl = get_workload(case.kernel)
    try:
        placement = setup(emu, case.kernel, params, case.grid, case.block,
                          np.random.default_rng(seed), case.allocations)
        allocations = emu.memory.allocations()
        regions = tuple((a.base, emu.copy_dtoh(a.base, a.size).tobytes())
                        for a in allocations)
        program = emu.load_module(module)
        names = tuple(spec["param_names"])
        result = emu.launch(program, function.name, grid=case.grid, block=case.block,
                            params=param_values(names, placement.params), trace=True,
                            shared_bytes=wl.shared_bytes)
    except (MemoryFault, LaunchError) as error:
        raise InvalidCase(f"{case.name} faults on the emulator: {error}") from error
    except (KernelcheckError, ValueError, OverflowError, KeyError) as error:
        raise InvalidCase(f"{case.name} is not a valid instance: {error}") from error
    emulated = tuple(emu.copy_dtoh(a, len(d)).tobytes() for a, d in regions)
    _check_relocatable(case, placement, regions)
    return Materialized(case, path, module, function, placement.params, placement.buffers,
                        regions, names, wl.shared_bytes, result.trace, emulated)


def _check_relocatable(case: Case, placement, regions) -> None:
    """Every pointer's touched bytes lie in one allocation (see :class:`NotRelocatable`)."""
    for buf in placement.buffers:
        try:
            base = pointer_value(placement.params, buf.pointer)
        except (KeyError, TypeError):
            continue
        size = np.dtype(buf.dtype).itemsize
        segments = buf.segments if buf.segments is not None else \
            (((buf.lo, buf.hi),) if buf.hi > buf.lo else ())
        hit = {next((k for k, (lo, data) in enumerate(regions)
                     if lo <= base + a * size < lo + len(data)), None) for a, _ in segments}
        if len(hit) > 1:
            raise NotRelocatable(f"{case.name}: pointer {buf.pointer} reaches "
                                 f"{len(hit)} allocations at fixed distances")
