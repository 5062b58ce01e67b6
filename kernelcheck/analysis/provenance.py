"""Pointer provenance of generic addresses: which registers provably point into the shared or
local window.

A generic ``ld``/``st``/``atom`` (ISA §6.4.1) reaches global memory unless its address lies in
the shared or the local window. The symbolic walk (:mod:`kernelcheck.analysis.symbolic`)
drops an access from the global access list only when its base register holds a *window
pointer*: a value this module proves to be an address inside the shared or the local window.
Every other generic access counts as possibly global, so a wrong "window" answer could hide
a global write; a wrong "not a window pointer" answer only costs precision.

Rules (:func:`window_pointer`), each an induction step "the operands hold what the state says,
so the result does":

* ``cvta.shared``/``cvta.local`` (not ``cvta.to.*``) produce the generic address of a
  shared/local address (ISA §9.7.9.17): a window pointer.
* ``mov`` copies a window pointer; ``selp`` yields one when both candidates are.
* ``add a, b``: a window pointer when *one* operand is a window pointer (the base) and the
  other an *index* (:func:`is_index`); ``sub a, b`` when ``a`` is the base and ``b`` an index;
  ``mad a, b, c`` when ``c`` is the base and ``a`` and ``b`` are indices. Two window
  pointers, or a window pointer with anything of unknown provenance (a 64-bit parameter, a
  loaded value, a global or generic address), give a generic value: possibly global.
* Anything else (``and``, ``cvt``, loads, calls, ...) is not a window pointer.

An *index* is a value of known non-pointer provenance: constants, thread and launch indices,
parameters narrower than a pointer, and anything read through a wrap to 32 bits or fewer
(a 32-bit index widened with ``cvt``/``mul.wide``). Assumption, stated once: an index added
to a window pointer keeps the address inside the window. Leaving the window would be an
out-of-bounds shared or local access, which the PTX ISA leaves undefined; the analysis
assumes such accesses do not happen, as every C-level analysis of array indexing does.

Loop headers are handled by :mod:`kernelcheck.analysis.symbolic`: a loop-carried register
keeps the window property at the header only if it still holds at the end of every latch
(checked after the walk, which is repeated without the failed assumption).
"""

from __future__ import annotations

from kernelcheck.analysis.terms import (
    Global,
    Iter,
    Join,
    LoopVar,
    Opaque,
    Param,
    Term,
    TripMax,
    Wrap,
    children,
)
from kernelcheck.ir.nodes import Instruction, Register

__all__ = ["is_index", "window_pointer"]


def is_index(term) -> bool:
    """Whether ``term`` is a value of known non-pointer provenance (see the module notes).

    Examples
    --------
    >>> from kernelcheck.analysis.terms import Const, Special, mul, wrap
    >>> is_index(mul(Const(4), wrap(Special("%tid.x"), 32, True)))
    True
    >>> is_index(Param("p", 0, 8))
    False
    """
    if not isinstance(term, Term):
        return False
    stack = [term]
    while stack:
        t = stack.pop()
        kind = type(t)
        if kind is Wrap and t.bits <= 32:
            continue  # at most 32 significant bits: an integer, never a 64-bit pointer
        if kind is Param and t.size >= 8:
            return False
        if kind is Global:
            return False  # the address of a module variable
        if kind is Opaque and t.bits >= 64:
            return False
        if kind is LoopVar:
            return False  # a loop-carried value of unknown provenance
        if kind in (Iter, TripMax):
            continue  # iteration counts are integers
        if kind is Join:
            stack.extend(t.args)
            continue
        stack.extend(children(t))
    return True


def window_pointer(instr: Instruction, windows: set[str], srcs: list) -> bool:
    """Whether the (single) destination of ``instr`` provably holds a window pointer.

    Parameters
    ----------
    instr : Instruction
        The defining instruction.
    windows : set of str
        Registers that hold window pointers before ``instr``.
    srcs : list
        Terms of the source operands (``instr.operands[1:]``), in order.

    Returns
    -------
    bool
        ``True`` only when one of the rules of the module documentation applies.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Instruction, Register
    >>> from kernelcheck.analysis.terms import Const, Param
    >>> add = Instruction("add", ("s64",), (Register("%rd3"), Register("%rd1"),
    ...                   Register("%rd2")))
    >>> window_pointer(add, {"%rd1"}, [Opaque("cvta@1", 64), Const(8)])
    True
    >>> window_pointer(add, {"%rd1"}, [Opaque("cvta@1", 64), Param("p", 0, 8)])
    False
    """
    op = instr.opcode
    mods = instr.modifiers
    operands = instr.operands[1:]

    def base(k: int) -> bool:
        return k < len(operands) and type(operands[k]) is Register and (
            operands[k].name in windows)

    def index(k: int) -> bool:
        return k < len(srcs) and not base(k) and is_index(srcs[k])

    if "cc" in mods:
        return False  # carry chains are not pointer arithmetic
    if op == "cvta":
        return "to" not in mods and ("shared" in mods or "local" in mods)
    if op == "mov":
        return len(operands) == 1 and base(0)
    if op == "selp":
        return base(0) and base(1)
    if op == "add" and len(operands) == 2:
        return (base(0) and index(1)) or (base(1) and index(0))
    if op == "sub" and len(operands) == 2:
        return base(0) and index(1)
    if op == "mad" and len(operands) == 3:
        return base(2) and index(0) and index(1)
    return False
