"""Operand roles of an instruction: which registers it writes and reads, where it branches,
which state space it touches and how many bytes each access moves.

Every graph and analysis over the Kernel IR asks these questions through this module, so the
PTX conventions live in one place. References are to the PTX ISA 8.x (CUDA 12.x) manual.

Conventions
-----------
* Only general registers (:class:`~kernelcheck.ir.nodes.Register`) take part. Special
  registers (``%tid.x``, ``%clock64``) are read-only and never defined; they are not returned
  by :func:`uses` (an analysis needing them reads the operands itself).
* PTX writes destinations first (ISA §9.7 "Instruction Set"). A destination may be a
  register, a vector ``{%f1, %f2}``, a predicate pair ``%p1|%p2`` (``setp``, ``shfl.sync``)
  or the sink ``_``, which defines nothing.
* Instructions whose first operand is memory (``st``, ``red``, ``cp.async``, ``wmma.store``,
  ``mbarrier.init``, ``sust``) or that have no destination (``bra``, ``bar.sync``, ``ret``,
  ``exit``, ``trap``, fences) define no register. Registers named inside any address
  (``[%rd1+4]``) are uses, also in a destination address.
* ``call`` passes arguments through ``.param`` variables (``st.param`` before the call,
  ``ld.param`` after it, ISA §9.7.12.4), which are memory, not registers. Should a call list
  a register directly, a register in the return list is a definition and one in the argument
  list or the callee position (indirect call) is a use.
* The extended-precision opcodes (``add.cc``, ``addc``, ``sub.cc``, ``subc``, ``mad.cc``,
  ``madc``, ISA §9.7.2) communicate through the condition code; it is modelled as the pseudo
  register :data:`CARRY_FLAG` so that the dependence shows in the def-use graph.
* Unknown opcodes (``instr.known`` is ``False``): by convention the first operand is a
  definition when it is a register (or a vector or pair of registers) and not an address;
  every other register is a use. Dataflow treats such definitions as may-definitions
  (they kill nothing), since the convention is a guess.
"""

from __future__ import annotations

from kernelcheck.ir.nodes import (
    Address,
    BracketList,
    Immediate,
    Instruction,
    NegatedPredicate,
    ParenList,
    PredicatePair,
    Register,
    Symbol,
    VectorOperand,
    type_size,
)

__all__ = [
    "CARRY_FLAG",
    "MEMORY_SPACES",
    "defs",
    "uses",
    "is_conditional",
    "branch_targets",
    "memory_space",
    "memory_spaces",
    "access_width",
]

#: Pseudo register standing for the carry/condition code of ``add.cc``/``addc`` and kin.
CARRY_FLAG = "$cc"

#: The values :func:`memory_space` can return (besides ``None``).
MEMORY_SPACES = ("global", "shared", "local", "param", "const", "generic", "texture",
                 "surface")

# Opcodes that never write a register (their destination, if any, is memory or control).
_NO_REGISTER_DEFS = frozenset({
    "st", "red", "bra", "brx", "ret", "exit", "trap", "membar", "fence", "prefetch",
    "prefetchu", "cp", "stmatrix", "sust", "sured", "pmevent", "brkpt", "nanosleep",
    "griddepcontrol", "setmaxnreg", "discard", "applypriority", "BRA", "BRX", "JMP", "JMX",
    "RET", "EXIT", "KILL", "BREAK", "BAR", "ST", "STG", "STS", "STL", "RED", "MEMBAR",
})

_WRITES_CARRY = frozenset({"add", "sub", "mad"})  # with the .cc modifier
_READS_CARRY = frozenset({"addc", "subc", "madc"})

# Opcodes that access memory; the state space is named by a modifier or is generic.
_MEMORY_OPCODES = frozenset({
    "ld", "ldu", "st", "atom", "red", "prefetch", "prefetchu", "cp", "ldmatrix",
    "stmatrix", "wmma", "mbarrier", "multimem", "discard", "applypriority",
})
# cp.async bookkeeping that moves no data (ISA §9.7.9.25.3).
_GROUP_MODIFIERS = frozenset({"commit_group", "wait_group", "wait_all"})
_TEXTURE_OPCODES = frozenset({"tex", "tld4", "txq"})
_SURFACE_OPCODES = frozenset({"suld", "sust", "sured", "suq"})

_SPACE_OF_MODIFIER = {
    "global": "global",
    "shared": "shared",
    "shared::cta": "shared",
    "shared::cluster": "shared",
    "local": "local",
    "param": "param",
    "param::entry": "param",
    "param::func": "param",
    "const": "const",
}

# ld/st/atom/red and kin whose access width is type size x vector width.
_WIDTH_OPCODES = frozenset({"ld", "ldu", "st", "atom", "red", "multimem"})


def _registers_in(operand, out: list[str]) -> None:
    """Append the names of every register inside ``operand`` (iteratively)."""
    stack = [operand]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is Register:
            out.append(item.name)
        elif kind is Address:
            if type(item.base) is Register:
                out.append(item.base.name)
        elif kind is NegatedPredicate:
            out.append(item.register.name)
        elif kind is PredicatePair:
            out.append(item.first.name)
            if type(item.second) is Register:
                out.append(item.second.name)
        elif kind in (VectorOperand, ParenList, BracketList):
            stack.extend(reversed(item.elements))


def _dedup(names: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def _destination_count(instr: Instruction) -> int:
    """How many leading operands are register destinations (0 or 1)."""
    if not instr.operands:
        return 0
    opcode = instr.opcode
    if opcode in _NO_REGISTER_DEFS or opcode == "call":
        return 0
    if opcode in ("bar", "barrier"):
        # bar.red.popc.u32 d, a, p defines d; bar.sync/arrive define nothing (ISA §9.7.13.1).
        return 1 if "red" in instr.modifiers else 0
    first = instr.operands[0]
    if type(first) in (Register, VectorOperand, PredicatePair):
        return 1
    return 0


def defs(instr: Instruction) -> tuple[str, ...]:
    """The registers ``instr`` writes, in operand order, without duplicates.

    Parameters
    ----------
    instr : Instruction
        A PTX instruction.

    Returns
    -------
    tuple of str
        Register names; the sink ``_`` and memory destinations are left out. Extended
        precision arithmetic with ``.cc`` also writes :data:`CARRY_FLAG`.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Instruction, PredicatePair, Register
    >>> defs(Instruction("setp", ("lt", "s32"), (PredicatePair(Register("%p1"),
    ...      Register("%p2")), Register("%r1"), Register("%r2"))))
    ('%p1', '%p2')
    """
    names: list[str] = []
    if instr.opcode == "call" and instr.operands and type(instr.operands[0]) is ParenList:
        # call (ret), f, (args): registers in the return list are written.
        for element in instr.operands[0].elements:
            if type(element) is Register:
                names.append(element.name)
    elif _destination_count(instr):
        first = instr.operands[0]
        if type(first) is Register:
            names.append(first.name)
        elif type(first) is VectorOperand:
            names.extend(e.name for e in first.elements if type(e) is Register)
        else:  # PredicatePair
            names.append(first.first.name)
            if type(first.second) is Register:
                names.append(first.second.name)
    if instr.opcode in _WRITES_CARRY and "cc" in instr.modifiers or (
        instr.opcode in _READS_CARRY and "cc" in instr.modifiers
    ):
        names.append(CARRY_FLAG)
    return _dedup(names)


def uses(instr: Instruction) -> tuple[str, ...]:
    """The registers ``instr`` reads, in operand order, without duplicates.

    The guard predicate comes first; then every register of the source operands, address
    base registers (also of a destination address, as in ``st [%rd1], %r1``), vector
    elements and negated predicates.

    Parameters
    ----------
    instr : Instruction
        A PTX instruction.

    Returns
    -------
    tuple of str
        Register names; special registers are left out.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Address, Guard, Instruction, Register
    >>> uses(Instruction("st", ("global", "f32"), (Address(Register("%rd1")),
    ...      Register("%f1")), guard=Guard("%p1")))
    ('%p1', '%rd1', '%f1')
    """
    names: list[str] = []
    if instr.guard is not None:
        names.append(instr.guard.register)
    operands = instr.operands
    if instr.opcode == "call" and operands and type(operands[0]) is ParenList:
        operands = operands[1:]
    elif _destination_count(instr):
        operands = operands[1:]
    for operand in operands:
        if type(operand) is Symbol:
            continue
        _registers_in(operand, names)
    if instr.opcode in _READS_CARRY:
        names.append(CARRY_FLAG)
    return _dedup(names)


def is_conditional(instr: Instruction) -> bool:
    """Whether ``instr`` is guarded by a predicate (``@%p`` or ``@!%p``) and may not execute.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Guard, Instruction
    >>> is_conditional(Instruction("bra", guard=Guard("%p1")))
    True
    """
    return instr.guard is not None


def branch_targets(
    instr: Instruction, tables: dict[str, tuple[str, ...]] | None = None
) -> tuple[str, ...]:
    """The labels ``instr`` may branch to (not counting fall-through).

    Parameters
    ----------
    instr : Instruction
        Any instruction; only ``bra`` and ``brx.idx`` (and SASS ``BRA``/``JMP``) have targets.
    tables : dict, optional
        ``.branchtargets`` lists by name, to resolve the target list of ``brx.idx``
        (ISA §9.7.12.2). Without it, ``brx.idx`` yields the name of its list.

    Returns
    -------
    tuple of str
        Label names, in operand order.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Instruction, Symbol
    >>> branch_targets(Instruction("bra", ("uni",), (Symbol("$L__BB0_2"),)))
    ('$L__BB0_2',)
    """
    if instr.opcode in ("bra", "BRA", "JMP"):
        return tuple(o.name for o in instr.operands if type(o) is Symbol)
    if instr.opcode in ("brx", "BRX", "JMX"):
        names = [o.name for o in instr.operands if type(o) is Symbol]
        if tables is None:
            return tuple(names)
        labels: list[str] = []
        for name in names:
            labels.extend(tables.get(name, (name,)))
        return _dedup(labels)
    return ()


def memory_spaces(instr: Instruction) -> tuple[str, ...]:
    """Every state space ``instr`` accesses, destination first (``cp.async`` names two).

    Returns ``()`` for instructions that access no memory. A memory instruction without a
    state-space modifier uses generic addressing (ISA §6.4.1) and yields ``("generic",)``.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Instruction
    >>> memory_spaces(Instruction("cp", ("async", "ca", "shared", "global")))
    ('shared', 'global')
    """
    opcode = instr.opcode
    if opcode in _TEXTURE_OPCODES:
        return ("texture",)
    if opcode in _SURFACE_OPCODES:
        return ("surface",)
    if opcode not in _MEMORY_OPCODES:
        return ()
    if opcode == "wmma" and "mma" in instr.modifiers:
        return ()
    if opcode == "cp" and (not instr.modifiers or _GROUP_MODIFIERS.intersection(
            instr.modifiers)):
        return ()
    spaces = [_SPACE_OF_MODIFIER[m] for m in instr.modifiers if m in _SPACE_OF_MODIFIER]
    if not spaces:
        return ("generic",)
    return tuple(spaces)


def memory_space(instr: Instruction) -> str | None:
    """The state space ``instr`` accesses, or ``None`` when it accesses no memory.

    One of :data:`MEMORY_SPACES`. For copies naming two spaces (``cp.async.ca.shared.global``)
    this is the destination; see :func:`memory_spaces` for both.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Instruction
    >>> memory_space(Instruction("ld", ("global", "nc", "f32"))), memory_space(
    ...     Instruction("ld", ("f32",)))
    ('global', 'generic')
    """
    spaces = memory_spaces(instr)
    return spaces[0] if spaces else None


def access_width(instr: Instruction) -> int | None:
    """Bytes moved per thread by one memory access of ``instr``.

    The element type size times the vector width (``.v2``, ``.v4``, ``.v8``) for ``ld``,
    ``ldu``, ``st``, ``atom``, ``red`` and ``multimem``; the copy size operand for
    ``cp.async`` with an immediate size (ISA §9.7.9.25). ``None`` when the instruction
    accesses no memory or its width is not modelled (``wmma``, ``ldmatrix``, bulk copies
    with a register size, ``prefetch``).

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Instruction
    >>> access_width(Instruction("ld", ("global", "v4", "f32")))
    16
    """
    opcode = instr.opcode
    if opcode == "cp" and "async" in instr.modifiers and "bulk" not in instr.modifiers:
        if len(instr.operands) >= 3 and type(instr.operands[2]) is Immediate:
            value = instr.operands[2].value
            return value if isinstance(value, int) and value > 0 else None
        return None
    if opcode not in _WIDTH_OPCODES:
        return None
    size = 0
    lanes = 1
    for modifier in instr.modifiers:
        if len(modifier) >= 2 and modifier[0] == "v" and modifier[1:].isdigit():
            lanes = int(modifier[1:])
        elif modifier != "pred":
            found = type_size(modifier)
            if found:
                size = found
    if not size:
        return None
    return size * lanes
