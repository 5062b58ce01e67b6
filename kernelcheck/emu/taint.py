"""Which registers of a function may hold a value that differs between runs of one instance,
and which are used.

The dynamic oracle needs two facts about an atomic instruction that cannot be seen from the
values alone: whether its result is used (an atomic whose old value flows on is a read of its
location), and whether its operand may differ when the instance runs again (an ``atom.exch``
of such a value is not idempotent in effect: a re-execution may store another value).

Which loads make a value differ between runs (the definition of an idempotent instance:
running it again from any partly executed state gives the same final global memory):

* a plain load of **global** memory (``ld.global``, ``ldu.global``, ``ld.global.nc``) does
  not: the oracle records it as a read, so if any write of the instance (plain or atomic)
  touches those bytes the instance is not idempotent anyway (its clobbered set is not
  empty); otherwise the bytes hold the same value in every run, and the value loaded is the
  same. Different threads exchanging different values into one address are caught by the
  oracle's own check of the values each address receives;
* a load of shared or local memory, of a generic address (it may reach shared memory), a
  texture or surface fetch, an asynchronous copy and the old value an atomic returns do:
  their contents are produced during the launch, in an order the hardware chooses;
* so do the special registers that are not launch coordinates (``%clock``,
  ``%globaltimer``, ``%smid``, ...).

A register is *tainted* if any definition of it is one of those, or reads a tainted
register; flow-insensitive, so it over-approximates. Over-approximation only makes the
oracle call more instances "not idempotent", never fewer, so it stays sound.
"""

from __future__ import annotations

from kernelcheck.ir.nodes import Function, SpecialRegister
from kernelcheck.ir.operands import defs, uses

__all__ = ["memory_tainted", "used_registers"]

_LOADS = frozenset({"ld", "ldu", "atom", "red", "ld.global", "tex", "tld4", "suld",
                    "cp.async", "ldmatrix"})


#: Special registers with one value per thread and launch (ISA §10).
_COORDINATES = frozenset({"%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpsize",
                          "%nwarpid", "%nsmid", "%gridid", "%lanemask_eq", "%lanemask_le",
                          "%lanemask_lt", "%lanemask_ge", "%lanemask_gt"})


def _reads_mutable_memory(instr, kernel: bool) -> bool:
    """Whether ``instr`` defines a value that may differ between runs (module notes)."""
    for operand in instr.operands[1:]:
        if type(operand) is SpecialRegister and operand.base not in _COORDINATES and \
                not operand.base.startswith("%envreg"):
            return True
    if instr.opcode not in _LOADS:
        return False
    if "const" in instr.modifiers:
        return False
    if instr.opcode in ("ld", "ldu") and "global" in instr.modifiers:
        return False  # a read the oracle records: see the module notes
    # A device function's parameters may carry anything its caller passed.
    return not ("param" in instr.modifiers and kernel)


def memory_tainted(function: Function) -> frozenset[str]:
    """Registers that may hold a value derived from a load of mutable memory.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Function, SpecialRegister
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
