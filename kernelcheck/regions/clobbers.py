"""The clobber antidependences of a kernel, placed on its instructions, for region cutting.

Reads from :func:`kernelcheck.analysis.symbolic.symbolic_kernel` and the public rules of
:mod:`kernelcheck.analysis.summary` (``atomic_rule``, ``residue_disjoint``), the same ones the
kernel class is decided with, so that a kernel the summary calls ``always`` has no clobber here
and forms one region.

* A **read** is a global load, or a non-idempotent atomic (it reads the location it changes).
* A **write** is a global store or any global atomic (idempotent ones write too).
* A read and a write **may alias** unless ``residue_disjoint`` proves they never share a byte
  for any arguments and threads (``a[2i]`` and ``a[2i+1]``). Two different pointer parameters
  may alias: the same buffer may be passed twice.
* A non-idempotent atomic (``atomic_rule``) is a clobber by itself: running it again changes
  memory again, so no resume may execute it a second time.

Accesses the analysis inlined from device functions keep their *site*
(``call_path + (instruction,)``): boundaries may sit inside a callee, per call site, so a read
and a write inside one call are separated there. ``position`` still names the kernel
instruction that performs the access (the ``call`` for an inlined one).
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelcheck.analysis.summary import atomic_rule, residue_disjoint
from kernelcheck.analysis.symbolic import SymbolicAccess, symbolic_kernel
from kernelcheck.ir.nodes import Function, Module

__all__ = ["GlobalAccess", "Clobber", "ClobberModel", "clobber_model"]


@dataclass(frozen=True, slots=True)
class GlobalAccess:
    """One global access, where it happens in the kernel body.

    ``position`` is the kernel instruction that performs it (the ``call`` for an access
    inlined from a device function); ``instruction`` its index in ``function``;
    ``non_idempotent`` is true for an atomic that must not run twice (``rule`` says why).
    """

    kind: str
    position: int
    instruction: int
    function: str
    opcode: str
    line: int | None
    base: str | None
    call_path: tuple[int, ...] = ()
    non_idempotent: bool = False
    rule: str = ""

    @property
    def site(self) -> tuple[int, ...]:
        """Where it runs: ``call_path + (instruction,)`` (``(instruction,)`` in the kernel)."""
        return self.call_path + (self.instruction,)

    def describe(self) -> str:
        """``ld.global.f32 #11 (line 7)`` with the callee for inlined accesses."""
        line = f" (line {self.line})" if self.line is not None else ""
        via = f" in {self.function} via call #{self.position}" if self.call_path else ""
        return f"{self.opcode} #{self.instruction}{line}{via}"

    def to_json(self) -> dict:
        return {"kind": self.kind, "position": self.position, "instruction": self.instruction,
                "function": self.function, "text": self.opcode, "line": self.line,
                "base": self.base, "call_path": list(self.call_path),
                "non_idempotent": self.non_idempotent, "rule": self.rule}


@dataclass(frozen=True, slots=True)
class Clobber:
    """A read and a write that may touch the same global bytes."""

    read: GlobalAccess
    write: GlobalAccess
    why: str

    @property
    def cuttable(self) -> bool:
        """Whether a boundary can separate the two accesses (they are different sites)."""
        return self.read.site != self.write.site

    def describe(self) -> str:
        return f"read {self.read.describe()} / write {self.write.describe()}: {self.why}"

    def to_json(self) -> dict:
        return {"read": self.read.to_json(), "write": self.write.to_json(), "why": self.why}


@dataclass(frozen=True, slots=True)
class ClobberModel:
    """Every global access of a kernel, its may-alias pairs and its non-idempotent atomics.

    ``unmodelled`` is not empty when the analysis met something it does not model: the
    accesses are then incomplete and no region claim may rest on them.
    """

    accesses: tuple[GlobalAccess, ...]
    clobbers: tuple[Clobber, ...]
    atomics: tuple[GlobalAccess, ...]
    unmodelled: tuple[str, ...] = ()


def _base_name(access: SymbolicAccess) -> str | None:
    from kernelcheck.analysis.terms import Add, Param, Wrap

    inner = access.address.arg if type(access.address) is Wrap else access.address
    parts = inner.args if type(inner) is Add else (inner,)
    found = [p for p in parts if type(p) is Param and p.size == 8]
    return found[0].name if len(found) == 1 else None


def _why(read: GlobalAccess, write: GlobalAccess) -> str:
    if read.base is None or write.base is None:
        return "an address with no known base pointer may alias anything"
    if read.base != write.base:
        return (f"different pointer parameters ({read.base}, {write.base}) may point into "
                "the same buffer")
    return f"same pointer parameter {read.base}: overlap not excluded"


def clobber_model(module: Module, function: Function) -> ClobberModel:
    """The accesses, clobber pairs and non-idempotent atomics of the kernel ``function``.

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> m = parse_ptx(".version 8.0\\n.target sm_80\\n.address_size 64\\n"
    ...     ".visible .entry k(.param .u64 p) { .reg .b32 %r<3>; .reg .b64 %rd<3>;"
    ...     " ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1;"
    ...     " ld.global.u32 %r1, [%rd2]; add.s32 %r2, %r1, 1;"
    ...     " st.global.u32 [%rd2], %r2; ret; }")
    >>> [(c.read.position, c.write.position) for c in clobber_model(m, m.kernels[0]).clobbers]
    [(2, 4)]
    """
    sym = symbolic_kernel(module, function)
    placed: list[tuple[SymbolicAccess, GlobalAccess]] = []
    for a in sym.accesses:
        non_idempotent, rule = False, ""
        if a.kind == "atomic":
            ok, rule = atomic_rule(a)
            non_idempotent = not ok
        position = a.call_path[0] if a.call_path else a.instr.index
        line = a.instr.loc.line if a.instr.loc is not None else None
        placed.append((a, GlobalAccess(a.kind, position, a.instr.index, a.function,
                                       a.instr.full_opcode, line, _base_name(a), a.call_path,
                                       non_idempotent, rule)))
    reads = [(s, g) for s, g in placed if g.kind == "read" or g.non_idempotent]
    writes = [(s, g) for s, g in placed if g.kind in ("write", "atomic")]
    clobbers = []
    for sr, gr in reads:
        for sw, gw in writes:
            if sr is sw or residue_disjoint(sw, sr):
                continue
            clobbers.append(Clobber(gr, gw, _why(gr, gw)))
    atomics = tuple(g for _, g in placed if g.non_idempotent)
    return ClobberModel(tuple(g for _, g in placed), tuple(clobbers), atomics,
                        tuple(sym.unmodelled))
