"""Which registers of a function may hold a value read from mutable memory, and which are used.

The dynamic oracle needs two facts about an atomic instruction that cannot be seen from the
values alone: whether its result is used (an atomic whose old value flows on is a read of its
location), and whether its operand may come from memory the launch can change (an ``atom.exch``
of such a value is not idempotent in effect). Both are computed here, flow-insensitively, so
they over-approximate: a register is *tainted* if any definition of it reads memory (other
than ``.param`` and ``.const``) or any tainted register. Over-approximation only makes the
oracle call more instances "not idempotent", never fewer, so it stays sound.
"""

from __future__ import annotations

from kernelcheck.ir.nodes import Function
from kernelcheck.ir.operands import defs, uses

__all__ = ["memory_tainted", "used_registers"]

_LOADS = frozenset({"ld", "ldu", "atom", "red", "ld.global", "tex", "tld4", "suld",
                    "cp.async", "ldmatrix"})


def _reads_mutable_memory(instr, kernel: bool) -> bool:
    if instr.opcode not in _LOADS:
        return False
    if "const" in instr.modifiers:
        return False
    # A device function's parameters may carry anything its caller passed.
    return not ("param" in instr.modifiers and kernel)


def memory_tainted(function: Function) -> frozenset[str]:
    """Registers that may hold a value derived from a load of mutable memory.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Function
    >>> memory_tainted(Function("f", "entry", body=()))
    frozenset()
    """
    tainted: set[str] = set()
    flows: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for instr in function.instructions:
        d = defs(instr)
        if _reads_mutable_memory(instr, function.is_kernel):
            tainted.update(d)
        else:
            flows.append((d, uses(instr)))
    changed = True
    while changed:
        changed = False
        for d, u in flows:
            if any(name in tainted for name in u):
                for name in d:
                    if name not in tainted:
                        tainted.add(name)
                        changed = True
    return frozenset(tainted)


def used_registers(function: Function) -> frozenset[str]:
    """Every register read by some instruction of ``function`` (guards included)."""
    used: set[str] = set()
    for instr in function.instructions:
        used.update(uses(instr))
    return frozenset(used)
