"""Values kept on the local stack: store-to-load forwarding through ``.local`` depot slots.

Unoptimized builds (``-O0``, ``-G``) spill parameters and locals to a ``.local`` array, the
*depot* (``__local_depot3``), through a frame pointer (``mov.u64 %SPL, __local_depot3;
cvta.local.u64 %SP, %SPL``), and load them back before use::

    st.u64  [%SP+0], %rd2;        // y.p spilled
    ...
    ld.u64  %rd12, [%SP+0];       // y.p reloaded: the same value

Without forwarding the reloaded pointer is an opaque memory value and every store through
it is "a write at an unknown address". The symbolic walk (:mod:`kernelcheck.analysis.symbolic`)
forwards the stored term to the load when the load reads *exactly* the bytes of one earlier
store (same depot symbol, same byte offset, same width) and nothing may have written them in
between on any path. Rules, each sound on its own:

* **Frame pointers** (:func:`frame_slot`): a register holds ``&depot + k`` only when it was
  defined by ``mov`` of a ``.local`` variable of the function (local addressing), ``cvta.local``
  of such a register (generic addressing, ``cvta.to.local`` is not accepted), ``mov`` of a
  frame pointer, or ``add`` of a frame pointer and an integer immediate. Any other definition
  (including a predicated one) removes the property.
* **Stores** to a depot slot by address (:func:`slot_of_address`) replace the facts about
  every byte they overlap; a predicated store, a vector store or one of a value that is not a
  plain register or immediate only removes them.
* **Anything else that may write local memory** (a store, atomic or copy in the local or
  generic space through any other address, or any call: a callee may write through an
  escaped pointer) forgets every slot (:func:`may_write_local`).
* **Merges** keep a slot only when every incoming path stores the same term of the same
  width; a **loop header** forgets every slot when the loop body may write local memory, and
  frame pointers the loop redefines.
* **Loads** of exactly a known slot bind ``Wrap(term, 8*width, signed)``: the loaded bits are
  the stored register's low ``width`` bytes, zero- or sign-extended as the load's type says,
  and a register's term is only ever congruent to its bits.

Assumption, stated once (the one :mod:`kernelcheck.analysis.provenance` makes): an access
through ``&depot + k`` stays inside that depot variable, so two distinct ``.local`` variables
never alias; leaving the variable would be an out-of-bounds local access, undefined in PTX.
"""

from __future__ import annotations

from kernelcheck.analysis.terms import Term, wrap
from kernelcheck.ir.nodes import Address, Function, Immediate, Instruction, Register, Symbol
from kernelcheck.ir.operands import access_width, memory_spaces

__all__ = ["Slot", "local_symbols", "frame_slot", "slot_of_address", "may_write_local",
           "store", "merge_slots", "forwarded_value", "store_value"]

#: A depot address: (``.local`` variable name, byte offset, generic addressing?).
Slot = tuple[str, int, bool]
#: Opcodes that access memory without writing it.
_READ_ONLY = frozenset({"ld", "ldu", "prefetch", "prefetchu", "tex", "tld4", "suld",
                        "ldmatrix", "applypriority", "suq", "txq"})
#: Spaces a write to which cannot reach local memory.
_NOT_LOCAL = frozenset({"global", "shared", "param", "const", "texture", "surface"})


def local_symbols(function: Function) -> frozenset[str]:
    """The names of the ``.local`` variables declared in ``function``'s body."""
    return frozenset(v.name for v in function.local_variables if v.space == "local")


def frame_slot(instr: Instruction, frames: dict[str, Slot], symbols: frozenset[str]
               ) -> Slot | None:
    """The depot address ``instr`` leaves in its one destination, or ``None``.

    Parameters
    ----------
    instr : Instruction
        A register definition (``mov``, ``cvta``, ``add``).
    frames : dict
        Registers known to hold depot addresses before ``instr``.
    symbols : frozenset of str
        The function's ``.local`` variables (:func:`local_symbols`).

    Returns
    -------
    Slot or None
        ``None`` unless one of the rules of the module documentation applies.
    """
    ops = instr.operands
    if instr.guard is not None or len(ops) < 2 or type(ops[0]) is not Register:
        return None
    op, mods = instr.opcode, instr.modifiers
    src = ops[1]
    if op == "mov" and len(ops) == 2:
        if type(src) is Symbol and src.name in symbols:
            return src.name, 0, False
        if type(src) is Register:
            return frames.get(src.name)
        return None
    if op == "cvta" and "local" in mods and "to" not in mods and type(src) is Register:
        slot = frames.get(src.name)
        return (slot[0], slot[1], True) if slot is not None and not slot[2] else None
    if op == "add" and len(ops) == 3:
        a, b = ops[1], ops[2]
        if type(a) is Immediate and type(b) is Register:
            a, b = b, a
        if type(a) is Register and type(b) is Immediate and b.kind == "int" and (
                a.name in frames):
            name, offset, generic = frames[a.name]
            return name, offset + int(b.value), generic
    return None


def slot_of_address(address, space: str, frames: dict[str, Slot],
                    symbols: frozenset[str]) -> tuple[str, int] | None:
    """``(variable, byte offset)`` when ``address`` (in ``space``) is a known depot slot."""
    if type(address) is not Address:
        return None
    base = address.base
    if type(base) is Register and base.name in frames:
        name, offset, generic = frames[base.name]
        if space != ("generic" if generic else "local"):
            return None
        return name, offset + address.offset
    if type(base) is Symbol and base.name in symbols and space == "local":
        return base.name, address.offset
    return None


def may_write_local(instr: Instruction) -> bool:
    """Whether ``instr`` may write local memory (of this function or, through a pointer, of
    a caller): a call, or a memory write in the local or generic space."""
    if instr.opcode == "call":
        return True
    spaces = memory_spaces(instr)
    if not spaces or instr.opcode in _READ_ONLY:
        return False
    return not _NOT_LOCAL.issuperset(spaces[:1])


def store(slots: dict, key: tuple[str, int], width: int | None, value: Term | None) -> None:
    """Record a store of ``value`` (``None``: unknown) to ``width`` bytes at ``key``.

    Every fact about an overlapping byte of the same variable is removed first; without a
    known width the whole variable is forgotten.
    """
    name, offset = key
    for other in [k for k in slots if k[0] == name]:
        other_width = slots[other][1]
        if width is None or (other[1] < offset + width and offset < other[1] + other_width):
            del slots[other]
    if value is not None and width:
        slots[key] = (value, width)


def merge_slots(states: list[dict]) -> dict:
    """The slots every one of ``states`` holds with the same term and width."""
    first, rest = states[0], states[1:]
    return {k: v for k, v in first.items() if all(s.get(k) == v for s in rest)}


def forwarded_value(slots: dict, key: tuple[str, int] | None, instr: Instruction
                    ) -> Term | None:
    """The term a scalar load ``instr`` of ``key`` reads, when one store left it there."""
    if key is None or instr.guard is not None or key not in slots:
        return None
    if len(instr.operands) < 2 or type(instr.operands[0]) is not Register:
        return None
    term, width = slots[key]
    if access_width(instr) != width:
        return None
    signed = any(m.startswith("s") and m[1:].isdigit() for m in instr.modifiers)
    return wrap(term, 8 * width, signed)


def store_value(instr: Instruction, value_of) -> Term | None:
    """The term a scalar ``st`` writes (``None`` for vector, predicated or odd operands)."""
    operand = instr.operands[-1]
    if instr.guard is not None or type(operand) not in (Register, Immediate):
        return None
    if type(operand) is Immediate and operand.kind != "int":
        return None
    return value_of(operand)
