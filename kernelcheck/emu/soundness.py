"""Soundness harness: compare a static verdict provider with the emulator oracle.

For fixture kernels, instances are drawn (sizes, grid shapes, and the placement of the pointer
arguments relative to each other: disjoint, adjacent, exactly aliased, partially overlapping,
offset by a few elements, interleaved), each is run on the emulator with tracing, and the oracle
verdict is compared with the provider's. A provider is any callable
``provider(kernel, params, grid, block) -> verdict``; it may also take an ``allocations``
keyword (the ``(base, size)`` ranges of the instance's allocations, as the launch shim knows
them). Only ``"idempotent"`` counts as a claim; anything else is "not proven".

The report's matrix counts (provider, oracle) pairs. A provider ``idempotent`` where the oracle
says ``not_idempotent`` is a false positive and must never happen; oracle-idempotent instances
the provider did not prove are false negatives (the precision loss).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from kernelcheck.emu.emulator import Emulator
from kernelcheck.emu.instances import param_values, setup, with_pointer
from kernelcheck.emu.workloads import get_workload
from kernelcheck.errors import KernelcheckError

__all__ = ["Instance", "SoundnessReport", "PLACEMENTS", "draw_instance", "check_soundness",
           "MetamorphicReport", "check_metamorphic"]

PLACEMENTS = ("disjoint", "adjacent", "aliased", "overlapping", "offset", "interleaved")
_BASE = 0x7F10_0000_0000


@dataclass(frozen=True, slots=True)
class Instance:
    """A kernel instance for the harness."""

    kernel: str
    params: dict
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    placement: str = "given"


@dataclass(frozen=True, slots=True)
class SoundnessReport:
    """Confusion matrix per kernel: ``counts[kernel][(provider, oracle)]``; skipped runs."""

    counts: dict
    false_positives: tuple[Instance, ...]
    skipped: int

    def total(self, provider: str, oracle: str) -> int:
        return sum(c.get((provider, oracle), 0) for c in self.counts.values())

    def false_negative_rate(self, kernel: str | None = None) -> float:
        """Oracle-idempotent instances the provider did not prove, as a fraction."""
        tables = [self.counts[kernel]] if kernel else list(self.counts.values())
        idem = sum(c.get((p, "idempotent"), 0) for c in tables for p in ("idempotent",
                                                                          "not_proven"))
        missed = sum(c.get(("not_proven", "idempotent"), 0) for c in tables)
        return missed / idem if idem else 0.0

    def to_markdown(self) -> str:
        """The matrix as a markdown table, one row per kernel and a total."""
        rows = ["| kernel | proven & idem | proven & NOT idem | not proven & idem | "
                "not proven & not idem | FN rate |", "|---|---|---|---|---|---|"]
        keys = [("idempotent", "idempotent"), ("idempotent", "not_idempotent"),
                ("not_proven", "idempotent"), ("not_proven", "not_idempotent")]
        for kernel, c in sorted(self.counts.items()):
            rows.append(f"| {kernel[:48]} | " + " | ".join(str(c.get(k, 0)) for k in keys) +
                        f" | {self.false_negative_rate(kernel):.1%} |")
        rows.append("| **total** | " + " | ".join(str(self.total(*k)) for k in keys) +
                    f" | {self.false_negative_rate():.1%} |")
        return "\n".join(rows)


def _scale(value: int, rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2 * value + 2))


def draw_instance(kernel: str, template: dict, rng: np.random.Generator,
                  placement: str | None = None) -> Instance:
    """A random instance of ``kernel`` modelled on a template instance (expected.toml form).

    Integer scalars are redrawn around the template's values (offsets may go negative), the
    grid's x dimension is redrawn, the block is kept (several kernels require theirs), and the
    pointers are placed by ``placement`` (random when ``None``).
    """
    wl = get_workload(kernel)
    params = dict(template["params"])
    grid = list(template["grid"])
    block = tuple(template["block"])
    for name, value in list(params.items()):
        if isinstance(value, bool) or not isinstance(value, int) or value >= 0x7E0000000000:
            continue
        if name in ("off", "ld"):
            n = params.get("n", 64)
            params[name] = int(rng.integers(-2 * n, 2 * n + 1)) if name == "off" else \
                int(rng.integers(-2, n + 3))
        elif name in ("src_off", "dst_off"):
            small = int(rng.integers(0, 96))
            params[name] = small if rng.random() < 0.7 else ((1 << 32) - small) & 0xFFFFFFFF
        elif name in ("v", "bit", "cost", "limit", "s", "a", "value") or name.endswith(
                ("itemsize", "stride_0", "meminfo", "parent", "scratch")):
            continue
        else:
            params[name] = _scale(value, rng)
    for name in ("out_nitems", "a_nitems", "bins_nitems", "counts_nitems"):
        if name in params:
            params[name.replace("nitems", "shape_0")] = params[name]
    if "counts_nitems" in params:
        params["counts_nitems"] = max(params["counts_nitems"], 1)
        params["counts_shape_0"] = params["counts_nitems"]
    grid[0] = int(rng.integers(1, 2 * grid[0] + 1)) if wl.kernel != "stencil1d_shared_r3" \
        else grid[0]
    grid3 = tuple(grid)
    placement = placement or PLACEMENTS[int(rng.integers(len(PLACEMENTS)))]
    params = _place(kernel, params, grid3, block, placement, rng)
    return Instance(kernel, params, grid3, block, placement)


def _place(kernel, params, grid, block, placement, rng):
    """Set every pointer of ``params`` by the placement strategy, relative to the first."""
    buffers = get_workload(kernel).buffers(params, grid, block)
    cursor = _BASE
    first = prev_end = None
    for k, buf in enumerate(buffers):
        size = np.dtype(buf.dtype).itemsize
        lo, hi = (0, 1) if buf.segments is not None else (buf.lo, max(buf.hi, buf.lo + 1))
        if k == 0 or placement == "disjoint":
            base = cursor - lo * size
            cursor = (base + hi * size + 2 * 4096 + 255) // 256 * 256
        elif placement == "adjacent":
            base = prev_end - lo * size
        elif placement == "aliased":
            base = first
        elif placement == "overlapping":
            base = first + size * int(rng.integers(1, max(2, hi - lo)))
        elif placement == "offset":
            base = first + size * int(rng.integers(1, 4))
        else:  # interleaved: starts one element into the first buffer
            base = first + size
        if first is None:
            first = base
        prev_end = base + hi * size
        params = with_pointer(params, buf.pointer, int(base))
    return params


def _call(provider, inst: Instance, allocations):
    try:
        accepts = "allocations" in inspect.signature(provider).parameters
    except (TypeError, ValueError):
        accepts = False
    if accepts:
        return provider(inst.kernel, inst.params, inst.grid, inst.block,
                        allocations=allocations)
    return provider(inst.kernel, inst.params, inst.grid, inst.block)


def check_soundness(instances: Iterable[Instance], provider: Callable, *,
                    module_for: Callable[[str], object], names_for: Callable[[str], list],
                    entry_for: Callable[[str], str] | None = None,
                    seed: int = 0) -> SoundnessReport:
    """Run every instance on the emulator and tabulate provider verdicts against the oracle.

    ``module_for(kernel)`` gives the parsed module to run, ``names_for(kernel)`` the parameter
    names in signature order, ``entry_for(kernel)`` the entry name in that module. Instances
    that fault or are invalid (negative sizes, accesses outside the placed buffers) are counted
    as skipped.
    """
    counts: dict = {}
    false_positives = []
    skipped = 0
    rng = np.random.default_rng(seed)
    for inst in instances:
        emu = Emulator()
        wl = get_workload(inst.kernel)
        try:
            placed = setup(emu, inst.kernel, inst.params, inst.grid, inst.block, rng)
            program = emu.load_module(module_for(inst.kernel))
            values = param_values(names_for(inst.kernel), placed.params)
            result = emu.launch(program, entry_for(inst.kernel) if entry_for else inst.kernel,
                                grid=inst.grid, block=inst.block, params=values, trace=True,
                                shared_bytes=wl.shared_bytes)
        except (KernelcheckError, ValueError, OverflowError, KeyError):
            skipped += 1
            continue
        oracle = result.trace.verdict
        claim = _call(provider, inst, placed.allocations)
        claim = "idempotent" if claim == "idempotent" else "not_proven"
        table = counts.setdefault(inst.kernel, {})
        table[(claim, oracle)] = table.get((claim, oracle), 0) + 1
        if claim == "idempotent" and oracle != "idempotent":
            false_positives.append(inst)
    return SoundnessReport(counts, tuple(false_positives), skipped)



# ---------------------------------------------------------------- metamorphic checks


@dataclass(frozen=True, slots=True)
class MetamorphicReport:
    """What changed when kernels were rewritten by meaning-keeping transforms.

    ``checks`` counts, per kind, the comparisons made: ``class`` (the kernel class of the
    analysis), ``verdict`` (an instance's static verdict), ``oracle`` (the emulator's
    verdict of an instance) and ``memory`` (every buffer after an emulated run); ``changes``
    lists each difference found, as a line naming the kernel, transform, seed and what
    differed. ``skipped`` counts instances that could not run (invalid for the kernel).
    """

    checks: dict
    changes: tuple[str, ...]
    skipped: int

    @property
    def total_changes(self) -> int:
        return len(self.changes)


def check_metamorphic(instances: Iterable[Instance], *, module_for: Callable[[str], object],
                      names_for: Callable[[str], list], entry_for: Callable[[str], str],
                      analyse: Callable, transforms: Iterable[str] = ("rename", "blocks",
                                                                      "outline"),
                      seeds: Iterable[int] = (0,), run: bool = True,
                      seed: int = 0) -> MetamorphicReport:
    """Compare verdicts and emulated memory of kernels before and after PTX rewrites.

    Parameters
    ----------
    instances : iterable of Instance
        Instances of fixture kernels (all of one module per call is the usual use).
    module_for, names_for, entry_for : callable
        As for :func:`check_soundness`.
    analyse : callable
        ``analyse(module) -> (class_of, verdict_of)``: ``class_of(entry)`` is the kernel
        class and ``verdict_of(entry, instance, allocations)`` the instance verdict of the
        static analysis for that module.
    transforms, seeds
        The transforms of :mod:`kernelcheck.ptx.metamorphic` and the seeds each is drawn
        with.
    run : bool
        Also run every instance on the emulator, before and after.

    Returns
    -------
    MetamorphicReport
    """
    from kernelcheck.emu.instances import read_buffers
    from kernelcheck.ptx.metamorphic import transform_module

    instances = list(instances)
    checks = {"class": 0, "verdict": 0, "oracle": 0, "memory": 0}
    changes: list[str] = []
    skipped = 0
    analyses: dict = {}

    def analysis(module):
        key = id(module)
        if key not in analyses:
            analyses[key] = (module, analyse(module))
        return analyses[key][1]

    def emulate(module, inst: Instance):
        emu = Emulator()
        rng = np.random.default_rng(seed)
        placed = setup(emu, inst.kernel, inst.params, inst.grid, inst.block, rng)
        program = emu.load_module(module)
        values = param_values(names_for(inst.kernel), placed.params)
        result = emu.launch(program, entry_for(inst.kernel), grid=inst.grid, block=inst.block,
                            params=values, trace=True,
                            shared_bytes=get_workload(inst.kernel).shared_bytes)
        return placed, result.trace.verdict, read_buffers(emu, placed)

    for inst in instances:
        original = module_for(inst.kernel)
        base = None
        if run:
            try:
                base = emulate(original, inst)
            except (KernelcheckError, ValueError, OverflowError, KeyError):
                skipped += 1
                continue
        class_of, verdict_of = analysis(original)
        entry = entry_for(inst.kernel)
        for name in transforms:
            for s in seeds:
                where = f"{inst.kernel} [{name}, seed {s}]"
                rewritten = _rewritten(original, name, s, transform_module)
                new_class, new_verdict = analysis(rewritten)
                checks["class"] += 1
                if new_class(entry) != class_of(entry):
                    changes.append(f"{where}: class {class_of(entry)} -> {new_class(entry)}")
                allocations = base[0].allocations if base is not None else None
                checks["verdict"] += 1
                before = verdict_of(entry, inst, allocations)
                after = new_verdict(entry, inst, allocations)
                if before != after:
                    changes.append(f"{where} {inst.placement} grid {inst.grid}: verdict "
                                   f"{before} -> {after}")
                if not run:
                    continue
                placed, oracle, memory = emulate(rewritten, inst)
                checks["oracle"] += 1
                if oracle != base[1]:
                    changes.append(f"{where}: emulator verdict {base[1]} -> {oracle}")
                checks["memory"] += 1
                for key, value in base[2].items():
                    if key == "_offset":
                        continue
                    other = memory[key]
                    if value.tobytes() != other.tobytes():
                        changes.append(f"{where} {inst.placement}: buffer {key} differs")
    return MetamorphicReport(checks, tuple(changes), skipped)


_REWRITTEN: dict = {}


def _rewritten(module, name: str, seed: int, transform_module):
    key = (id(module), name, seed)
    found = _REWRITTEN.get(key)
    if found is None or found[0] is not module:
        if len(_REWRITTEN) > 512:
            _REWRITTEN.clear()
        found = _REWRITTEN[key] = (module, transform_module(module, name, seed))
    return found[1]
