"""Re-executable regions of a kernel: boundaries, the regions between them, and resume state.

:func:`kernel_regions` ties the package together: the clobbers of
:mod:`kernelcheck.regions.clobbers`, the boundary placement of :mod:`kernelcheck.regions.cut`
over the instruction graph of :mod:`kernelcheck.regions.graph`, and register liveness
(:func:`kernelcheck.ir.dataflow.liveness`) for the state a resume needs.

Boundaries may sit inside device functions, per call site: the graph is
:func:`kernelcheck.regions.graph.program_graph`, with every call inlined, and a boundary is a
*site* (the ``call`` instructions through which it runs, then its index in the callee).

What a boundary saves, and why it is enough (the emulator does exactly this,
:mod:`kernelcheck.emu.resume`):

* the live registers of every thread of the block (the bytes reported per boundary), in
  every frame of the call stack for a boundary inside a device function, and the
  call-scope ``.param`` variables of those frames;
* the block's shared memory and each thread's local memory, whole: a region may read shared
  or local values written before its start (shared and local never break idempotency, but a
  resumed block must find them as they were);
* where each thread stands and which threads have exited.

A boundary is a *block-wide* save: it is taken when the threads of the block that may still
touch global memory all stand at it (threads at an *inert* point, from which no global access
is reachable, may stand elsewhere). A block that reaches a boundary with other threads still
able to touch global memory elsewhere cannot save there; until its next save, it has no sound
resume point, and the emulator says so rather than resuming.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelcheck.ir.cfg import control_flow_graph
from kernelcheck.ir.dataflow import liveness
from kernelcheck.ir.nodes import Function, Module, type_size
from kernelcheck.regions.clobbers import Clobber, ClobberModel, GlobalAccess, clobber_model
from kernelcheck.regions.cut import place_boundaries, violations
from kernelcheck.regions.graph import inert_instructions, program_graph, window

__all__ = ["Boundary", "Region", "KernelRegions", "kernel_regions", "FORMAT_VERSION"]

#: Version of the ``regions`` JSON object (docs/regions.md).
FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class Boundary:
    """A region boundary, just before instruction ``position`` of ``function``.

    ``call_path`` lists the ``call`` instructions (the kernel's first) through which a
    boundary inside a device function is reached; it is empty for a boundary in the kernel
    body. ``cuts`` names the clobbers that a region would hold without this boundary (or the
    non-idempotent atomic it follows); ``live_registers`` are the registers live there and
    ``frames`` the live registers of every frame of the call stack, outermost first
    (``(function, registers)``); ``live_bytes`` is their size per thread.
    """

    position: int
    text: str
    line: int | None
    cuts: tuple[str, ...]
    live_registers: tuple[str, ...]
    live_bytes: int
    after_atomic: int | None = None
    call_path: tuple[int, ...] = ()
    function: str = ""
    frames: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def site(self) -> tuple[int, ...]:
        """``call_path + (position,)``."""
        return self.call_path + (self.position,)

    def where(self) -> str:
        """``#12`` in the kernel, ``#5 in f via call #16`` inside a device function."""
        via = "".join(f" via call #{c}" for c in reversed(self.call_path))
        return f"#{self.position}" + (f" in {self.function}{via}" if self.call_path else "")

    def to_json(self) -> dict:
        return {"position": self.position, "instruction": self.text, "line": self.line,
                "cuts": list(self.cuts), "live_registers": list(self.live_registers),
                "live_bytes": self.live_bytes, "after_atomic": self.after_atomic,
                "call_path": list(self.call_path), "function": self.function,
                "frames": [{"function": f, "live_registers": list(r)}
                           for f, r in self.frames]}


@dataclass(frozen=True, slots=True)
class Region:
    """The instructions a block may execute from ``start`` before reaching a boundary.

    Regions of a kernel with branches may share instructions (code after a join point is
    reachable from two starts). ``start``, ``instructions`` and ``accesses`` are kernel
    instructions (a ``call`` stands for what runs inside it); ``start_site`` and ``sites``
    say where inside device functions (see :func:`kernelcheck.regions.graph.program_graph`).
    ``atomic`` names the non-idempotent atomics inside: a resume never repeats one that
    completed, because a boundary follows it at once. ``uncut`` names clobbers inside the
    region no boundary can separate.
    """

    start: int
    instructions: tuple[int, ...]
    lines: tuple[int, ...]
    accesses: tuple[int, ...]
    atomic: tuple[int, ...] = ()
    uncut: tuple[str, ...] = ()
    start_site: tuple[int, ...] = ()
    sites: tuple[tuple[int, ...], ...] = ()

    @property
    def ranges(self) -> tuple[tuple[int, int], ...]:
        """The instructions as inclusive ``(first, last)`` runs."""
        out: list[list[int]] = []
        for i in self.instructions:
            if out and out[-1][1] == i - 1:
                out[-1][1] = i
            else:
                out.append([i, i])
        return tuple((a, b) for a, b in out)

    @property
    def clobber_free(self) -> bool:
        return not self.uncut

    def to_json(self) -> dict:
        return {"start": self.start, "ranges": [list(r) for r in self.ranges],
                "lines": list(self.lines), "accesses": list(self.accesses),
                "atomic": list(self.atomic), "clobber_free": self.clobber_free,
                "uncut": list(self.uncut), "start_site": list(self.start_site)}


@dataclass(frozen=True, slots=True)
class KernelRegions:
    """The regions of one kernel.

    ``status`` is ``one_region`` (no clobber: the kernel is idempotent as a whole, at the
    access level the kernel class uses), ``cut`` (boundaries separate every clobber),
    ``partly_cut`` (some clobber pair is one instruction and stays inside a region; no
    fixture has one since boundaries may sit inside device functions) or ``not_proven``
    (the analysis does not model the kernel; ``reason`` says why, and no region is claimed).
    ``inert`` lists the instructions from which no global access is reachable (threads
    there need not join a boundary save), as sites (``call_path + (index,)``).
    """

    kernel: str
    status: str
    reason: str
    entry: int | None
    regions: tuple[Region, ...]
    boundaries: tuple[Boundary, ...]
    clobbers: tuple[Clobber, ...]
    optimal: bool
    lower_bound: int
    shared_bytes: int
    local_bytes: int
    inert: frozenset[tuple[int, ...]] = frozenset()

    @property
    def positions(self) -> tuple[int, ...]:
        """The positions of the boundaries in the kernel body, sorted."""
        return tuple(b.position for b in self.boundaries if not b.call_path)

    @property
    def sites(self) -> tuple[tuple[int, ...], ...]:
        """Every boundary as a site ``call_path + (position,)``, sorted."""
        return tuple(sorted(b.site for b in self.boundaries))

    @property
    def resumable(self) -> bool:
        """Whether every region is clobber-free (resume from a boundary is sound)."""
        return self.status in ("one_region", "cut")

    def to_json(self) -> dict:
        return {"format_version": FORMAT_VERSION, "status": self.status,
                "reason": self.reason, "entry": self.entry,
                "boundaries": [b.to_json() for b in self.boundaries],
                "regions": [r.to_json() for r in self.regions],
                "clobbers": [c.to_json() for c in self.clobbers],
                "optimal": self.optimal, "lower_bound": self.lower_bound,
                "shared_bytes": self.shared_bytes, "local_bytes": self.local_bytes}


def _live_bytes(function: Function, names) -> int:
    types = function.register_types
    return sum(max(1, type_size(types.get(n, "b32"))) for n in names)


def _static_bytes(module: Module, function: Function, space: str) -> int:
    decls = [v for v in function.local_variables if v.space == space]
    if space == "shared":
        decls += [v for v in module.variables if v.space == "shared"]
    return sum(v.size or 0 for v in decls)


def kernel_regions(module: Module, function: Function, *,
                   exact_limit: int = 4000) -> KernelRegions:
    """Place the region boundaries of the kernel ``function`` of ``module``.

    Parameters
    ----------
    module : Module
        The module (device functions are inlined by the analysis).
    function : Function
        A kernel with a body.
    exact_limit : int
        Most boundary sets the exhaustive minimum search may try (see
        :func:`kernelcheck.regions.cut.place_boundaries`).

    Returns
    -------
    KernelRegions

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> m = parse_ptx(".version 8.0\\n.target sm_80\\n.address_size 64\\n"
    ...     ".visible .entry k(.param .u64 p) { .reg .b32 %r<3>; .reg .b64 %rd<3>;"
    ...     " ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1;"
    ...     " ld.global.u32 %r1, [%rd2]; add.s32 %r2, %r1, 1;"
    ...     " st.global.u32 [%rd2], %r2; ret; }")
    >>> r = kernel_regions(m, m.kernels[0])
    >>> r.status, r.positions, r.boundaries[0].live_registers
    ('cut', (3,), ('%r1', '%rd2'))
    """
    graph = program_graph(module, function)
    entry = graph.graph["entry"]
    functions = graph.graph["functions"]
    shared = _static_bytes(module, function, "shared")
    local = _static_bytes(module, function, "local")
    model: ClobberModel = clobber_model(module, function)
    if model.unmodelled or entry is None:
        reason = "; ".join(model.unmodelled) or "empty kernel body"
        if entry is None:
            return KernelRegions(function.name, "one_region", reason, None, (), (), (),
                                 True, 0, shared, local)
        return KernelRegions(function.name, "not_proven", reason, entry[0], (), (),
                             model.clobbers, False, 0, shared, local)
    lives = {path: liveness(f, control_flow_graph(f)) for path, f in functions.items()}

    def frames(site: tuple[int, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
        # Every frame of the stack: the callers stand at their call, the innermost at site.
        return tuple((functions[site[:k]].name,
                      tuple(sorted(lives[site[:k]].live_at(site[k]))))
                     for k in range(len(site)))

    def cost(site: tuple[int, ...]) -> int:
        return sum(_live_bytes(functions[site[:k]], names)
                   for k, (_, names) in enumerate(frames(site)))

    sites = {a.site for a in model.accesses}
    by_pair: dict[tuple, list[Clobber]] = {}
    for c in model.clobbers:
        by_pair.setdefault((c.read.site, c.write.site), []).append(c)
    pairs = {p for p in by_pair if p[0] != p[1]}
    forced: dict[tuple[int, ...], GlobalAccess] = {}
    for a in model.atomics:
        for succ in graph.successors(a.site):
            forced[succ] = a
    result = place_boundaries(graph, entry, pairs, forced, sites, cost,
                              exact_limit=exact_limit)
    chosen = set(result.boundaries)
    boundaries = []
    for p in result.boundaries:
        cut = sorted(violations(graph, entry, chosen - {p}, pairs))
        words = [c.describe() for pair in cut for c in by_pair[pair]]
        if p in forced:
            atom = forced[p]
            words.insert(0, f"{atom.describe()}: {atom.rule}; a resume must not repeat it")
        func = functions[p[:-1]]
        instr = func.instructions[p[-1]]
        stack = frames(p)
        boundaries.append(Boundary(p[-1], instr.full_opcode,
                                   instr.loc.line if instr.loc else None, tuple(words),
                                   stack[-1][1], cost(p),
                                   forced[p].position if p in forced else None,
                                   p[:-1], func.name, stack))
    regions = []
    uncut_any = False
    atomic_sites = {a.site: a.position for a in model.atomics}
    access_positions = {a.site: a.position for a in model.accesses}
    for start in [entry, *result.boundaries]:
        seen = window(graph, start, chosen)
        inside = tuple(sorted({site[0] for site in seen}))
        lines = sorted({functions[s[:-1]].instructions[s[-1]].loc.line for s in seen
                        if functions[s[:-1]].instructions[s[-1]].loc})
        accesses = tuple(sorted({access_positions[s] for s in seen if s in access_positions}))
        uncut = tuple(c.describe() for (r, w), cs in by_pair.items() if r == w and r in seen
                      for c in cs)
        uncut_any = uncut_any or bool(uncut)
        atomic = tuple(sorted({atomic_sites[s] for s in seen if s in atomic_sites}))
        regions.append(Region(start[0], inside, tuple(lines), accesses, atomic, uncut, start,
                              tuple(sorted(seen))))
    if uncut_any:
        status = "partly_cut"
        reason = "a clobber pair is one instruction; no boundary can separate it"
    elif not model.clobbers and not model.atomics:
        status, reason = "one_region", "no clobber antidependence and no non-idempotent atomic"
    else:
        status = "cut"
        one = len(result.boundaries) == 1
        reason = (f"{len(result.boundaries)} boundar{'y separates' if one else 'ies separate'}"
                  f" {len(pairs)} clobber position pair"
                  f"{'' if len(pairs) == 1 else 's'} and {len(model.atomics)} "
                  "non-idempotent atomic" + ("" if len(model.atomics) == 1 else "s"))
    inert = inert_instructions(graph, sites)
    return KernelRegions(function.name, status, reason, entry[0], tuple(regions),
                         tuple(boundaries), model.clobbers, result.optimal,
                         result.lower_bound, shared, local, inert)
