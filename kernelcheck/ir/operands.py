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

SASS (opcodes in upper case, as nvdisasm prints them; the functions below dispatch to the
``_sass_*`` section at the end of the module):

* ``RZ``, ``URZ``, ``PT`` and ``UPT`` are constants: never defined, never used.
* Register pairs and quads are explicit: a 64-bit base ``[R2.64]`` uses R2 and R3; a
  ``.64``/``.128``/``.256`` access or operation (``LDG.E.64``, ``STG.E.128``, ``ULDC.64``,
  ``ATOMG.E.CAS.64``) defines and reads 2, 4 or 8 consecutive registers; ``IMAD.WIDE``
  writes a pair and reads a pair as its addend; ``D*`` (double precision) instructions
  read and write pairs; conversions (``F2F``, ``F2I``, ``I2F``, ``I2I``) size each side
  from their type modifiers. A memory descriptor ``desc[UR4]`` reads the pair UR4, UR5.
* Destinations come first. Beyond the first, leading predicates are destinations for the
  compare family (``ISETP P0, PT, ...`` writes two predicates), the carry-out family
  (``IADD3 R2, P0, ...``) and ``VOTE``; a leading predicate followed by a register is a pair
  of destinations for ``SHFL``, ``LOP3`` and the atomics (``ATOMG PT, R2, ...``).
  ``PR`` (all predicates) stands for P0..P6 (``R2P``, ``P2R``).
* Opcodes kernelcheck has no table entry for are parsed with ``known=False`` and get the
  conservative PTX convention above (first register a may-definition).
"""

from __future__ import annotations

import re

from kernelcheck.ir.nodes import (
    Address,
    BracketList,
    ConstantRef,
    DescriptorRef,
    Immediate,
    Instruction,
    MemoryRef,
    ModifiedOperand,
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
    "access_kind",
    "ldgmc_width",
    "SASS_CONSTANT_REGISTERS",
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
    if _is_sass(instr):
        return _sass_registers(instr)[1]
    names: list[str] = []
    if instr.opcode == "call" and instr.operands and type(instr.operands[0]) is ParenList:
        # call (ret), f, (args): registers in the return list are written (a vector
        # register for a .reg .v2/.v4 return value: each of its elements).
        for element in instr.operands[0].elements:
            if type(element) is Register:
                names.append(element.name)
            elif type(element) is VectorOperand:
                names.extend(e.name for e in element.elements if type(e) is Register)
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
    if _is_sass(instr):
        return _sass_registers(instr)[2]
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
    if _is_sass(instr):
        return _sass_memory_spaces(instr)
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
    if _is_sass(instr):
        return _sass_access_width(instr)
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



# --------------------------------------------------------------------------- SASS
#
# Roles of SASS instructions (sm_70 and later, as nvdisasm of CUDA 12.x/13.x prints them).
# The opcode names and their meaning follow NVIDIA's "CUDA Binary Utilities" instruction
# set reference (Volta .. Blackwell tables).

#: Registers that are constants in SASS and never take part in dataflow.
SASS_CONSTANT_REGISTERS = frozenset({"RZ", "URZ", "PT", "UPT"})

_SASS_NO_DEFS = frozenset({
    "ST", "STG", "STS", "STL", "STSM", "RED", "REDG", "REDAS", "BRA", "BRX", "JMP", "JMX",
    "EXIT", "RET", "CALL", "BAR", "BSYNC", "WARPSYNC", "NOP", "YIELD", "MEMBAR", "FENCE",
    "ERRBAR", "CCTL", "CCTLL", "CCTLT", "DEPBAR", "BPT", "KILL", "NANOSLEEP", "LDGSTS",
    "LDGDEPBAR", "UTMALDG", "UTMASTG", "UTMAPF", "UTMACCTL", "UBLKCP", "UBLKPF", "UBLKRED",
    "UTMAREDG", "ARRIVES", "PREEXIT", "BREAK", "BREV_NOP", "WARPGROUP", "SUST", "SURED",
    "ACQBULK", "CGAERRBAR", "RPCMOV_NOP", "UCGABAR_ARV", "UCGABAR_WAIT", "USETMAXREG",
})
_SASS_COMPARE = frozenset({"ISETP", "FSETP", "DSETP", "HSETP2", "PSETP", "UISETP", "PLOP3",
                           "UPLOP3", "FCHK"})
_SASS_CARRY_OUT = frozenset({"IADD3", "UIADD3", "IMAD", "UIMAD", "LEA", "ULEA", "IADD",
                             "IMADSP", "IADD32I", "UIADD3.64"})
_SASS_PREDICATE_FIRST = frozenset({"SHFL", "LOP3", "ULOP3", "ATOMG", "ATOM", "ATOMS",
                                   "VOTE", "MATCH", "QSPC"})
_SASS_DOUBLE = frozenset({"DADD", "DMUL", "DFMA", "DMNMX", "DSETP", "DMMA"})
_SASS_CONVERT = frozenset({"F2F", "F2I", "I2F", "I2I", "F2IP", "I2FP", "FRND"})
_SASS_TYPE = {"F16": 1, "BF16": 1, "F32": 1, "F64": 2, "S8": 1, "U8": 1, "S16": 1,
              "U16": 1, "S32": 1, "U32": 1, "S64": 2, "U64": 2}

#: Every opcode the tables above (and the plain "first operand is the destination" rule)
#: describe correctly; others are parsed with ``known=False``.
SASS_KNOWN_OPCODES = frozenset({
    # integer and logic
    "IADD3", "IMAD", "IMUL", "IMNMX", "IABS", "LEA", "LOP3", "SHF", "SHL", "SHR", "SEL",
    "SGXT", "BMSK", "BREV", "FLO", "POPC", "PRMT", "ISETP", "IDP", "IDP4A", "VIADD",
    "VIADDMNMX", "VIMNMX", "VIMNMX3", "IMNMX3", "MOV", "MOV32I", "IADD", "IADD32I",
    # floating point
    "FADD", "FADD32I", "FMUL", "FMUL32I", "FFMA", "FFMA32I", "FMNMX", "FMNMX3", "FSEL",
    "FSET", "FSETP", "FCHK", "FSWZADD", "MUFU", "HADD2", "HMUL2", "HFMA2", "HMNMX2",
    "HSETP2", "HSET2", "DADD", "DMUL", "DFMA", "DMNMX", "DSETP", "FRND",
    # conversion and movement
    "F2F", "F2I", "I2F", "I2I", "F2IP", "I2FP", "SHFL", "S2R", "S2UR", "CS2R", "R2UR",
    "REDUX", "VOTE", "VOTEU", "MATCH", "P2R", "R2P", "PLOP3", "PSETP", "UFLO", "UPOPC",
    "UBREV", "UPRMT", "USHF", "USEL", "UMOV", "UIADD3", "UIMAD", "ULEA", "ULOP3",
    "UISETP", "UPLOP3", "USGXT", "UBMSK", "ULDC", "BMOV", "ELECT", "F2FP",
    # memory
    "LD", "LDG", "LDGMC", "LDS", "LDL", "LDC", "LDSM", "ST", "STG", "STS", "STL", "ATOM",
    "ATOMG",
    "ATOMS", "RED", "REDG", "LDGSTS", "LDGDEPBAR", "UTMALDG", "UTMASTG", "UBLKCP",
    "MEMBAR", "FENCE", "ERRBAR", "CCTL", "DEPBAR",
    # whether a generic address lies in a space (PTX's isspacep): a predicate, no access
    "QSPC",
    # control
    "BRA", "BRX", "JMP", "JMX", "EXIT", "RET", "CALL", "BAR", "BSSY", "BSYNC", "BREAK",
    "WARPSYNC", "NOP", "YIELD", "KILL", "NANOSLEEP", "BPT", "LEPC",
})

_SASS_GLOBAL = frozenset({"LDG", "STG", "ATOMG", "REDG", "LDGMC"})
_SASS_GENERIC = frozenset({"LD", "ST", "ATOM", "RED"})
_SASS_SHARED = frozenset({"LDS", "STS", "ATOMS", "LDSM", "STSM"})
_SASS_LOCAL = frozenset({"LDL", "STL"})
_SASS_CONST = frozenset({"LDC", "ULDC"})
_SASS_TEXTURE = frozenset({"TEX", "TLD", "TLD4", "TXQ", "TMML", "TXD"})
_SASS_SURFACE = frozenset({"SULD", "SUST", "SURED", "SUATOM", "SUQ"})
# Copies between spaces, destination first.
_SASS_COPIES = {"LDGSTS": ("shared", "global"), "UTMALDG": ("shared", "global"),
                "UTMASTG": ("global", "shared"), "UBLKCP": ("shared", "global")}
_SASS_WIDTH_MODIFIERS = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "32": 4, "64": 8,
                         "128": 16, "256": 32}
_SASS_ATOMIC = frozenset({"ATOM", "ATOMG", "ATOMS", "RED", "REDG", "SUATOM", "SURED"})
_SASS_WRITES = frozenset({"ST", "STG", "STS", "STL", "STSM", "SUST", "UTMASTG"})


def _is_sass(instr: Instruction) -> bool:
    """SASS opcodes are upper case; every PTX opcode is lower case."""
    opcode = instr.opcode
    return bool(opcode) and opcode[0].isupper()


def _is_predicate(name: str) -> bool:
    return name[0] == "P" or name.startswith("UP")


def _sass_expand(name: str, count: int, out: list[str]) -> None:
    """Append ``name`` and the ``count - 1`` registers after it (R4, 2 → R4, R5)."""
    if name in SASS_CONSTANT_REGISTERS:
        return
    if name in ("PR", "UPR"):
        prefix = "P" if name == "PR" else "UP"
        out.extend(f"{prefix}{k}" for k in range(7))
        return
    if count == 1 or _is_predicate(name):
        out.append(name)
        return
    digits = len(name) - len(name.rstrip("0123456789"))
    if not digits:
        out.append(name)
        return
    stem, number = name[:-digits], int(name[-digits:])
    out.extend(f"{stem}{number + k}" for k in range(count))


def _sass_register(operand) -> Register | None:
    """The register an operand names (through ``-R``, ``|R|``, ``R.reuse``), or None."""
    kind = type(operand)
    if kind is ModifiedOperand:
        operand = operand.operand
        kind = type(operand)
    return operand if kind is Register else None


def _sass_register_count(instr: Instruction) -> int:
    """How many consecutive registers one data operand of ``instr`` spans."""
    for modifier in instr.modifiers:
        if modifier == "64":
            return 2
        if modifier == "128":
            return 4
        if modifier == "256":
            return 8
    if instr.opcode == "LDSM" and instr.modifiers and instr.modifiers[-1] in ("2", "4"):
        return int(instr.modifiers[-1])
    return 1


def _sass_convert_counts(instr: Instruction) -> tuple[int, int]:
    """(destination, source) register counts of a conversion, from its type modifiers."""
    types = [m for m in instr.modifiers if m in _SASS_TYPE]
    if len(types) >= 2:
        return _SASS_TYPE[types[0]], _SASS_TYPE[types[1]]
    if len(types) == 1:
        # I2F.S64 names the source type (F32 result); F2I.U64 and F2F name the result.
        if instr.opcode in ("I2F", "I2FP"):
            return 1, _SASS_TYPE[types[0]]
        return _SASS_TYPE[types[0]], 1
    return 1, 1


def _sass_destination_count(instr: Instruction) -> int:
    """How many leading operands are destinations."""
    opcode = instr.opcode
    operands = instr.operands
    if opcode in _SASS_NO_DEFS or not operands:
        return 0
    if _sass_register(operands[0]) is None or type(operands[0]) is not Register:
        return 0
    if opcode in _SASS_COMPARE:
        count = 0
        while count < min(2, len(operands)) and type(operands[count]) is Register and (
                _is_predicate(operands[count].name)):
            count += 1
        return count
    if opcode in _SASS_PREDICATE_FIRST:
        first = operands[0].name
        if _is_predicate(first) and len(operands) > 1 and type(operands[1]) is Register:
            return 2
        if opcode in ("VOTE", "VOTEU") and len(operands) > 1 and type(
                operands[1]) is Register and _is_predicate(operands[1].name):
            return 2
        return 1
    if opcode in ("VOTEU",) and len(operands) > 1 and type(operands[1]) is Register and (
            _is_predicate(operands[1].name)):
        return 2
    if opcode in _SASS_CARRY_OUT:
        count = 1
        while count < min(3, len(operands)) and type(operands[count]) is Register and (
                _is_predicate(operands[count].name)):
            count += 1
        return count
    return 1


def _sass_operand_count(instr: Instruction, position: int, destination: bool) -> int:
    """Registers spanned by the register operand at ``position``."""
    opcode = instr.opcode
    if opcode in _SASS_DOUBLE:
        return 2
    if opcode == "LEPC":  # the 64-bit program counter (the return address of a call)
        return 2 if destination else 1
    if opcode == "CS2R":  # a 64-bit special register (SRZ, SR_CLOCKLO) unless `.32`
        return 1 if "32" in instr.modifiers or not destination else 2
    if opcode == "LDGMC":
        return max((ldgmc_width(instr.modifiers) or 4) // 4, 1) if destination else 1
    if opcode in _SASS_CONVERT:
        counts = _sass_convert_counts(instr)
        return counts[0] if destination else counts[1]
    if opcode in ("IMAD", "UIMAD") and "WIDE" in instr.modifiers:
        return 2 if destination or position == 3 else 1
    if opcode in ("LDC", "ULDC", "LD", "LDG", "LDS", "LDL", "LDSM", "ST", "STG", "STS",
                  "STL", "ATOM", "ATOMG", "ATOMS", "RED", "REDG", "MOV", "UMOV", "SEL",
                  "USEL", "SHFL", "IADD", "IMNMX", "SHF", "LOP3", "PRMT", "IADD3", "UIADD3",
                  "VIADD", "VIMNMX", "UIMNMX") or (
            opcode not in SASS_KNOWN_OPCODES):
        return _sass_register_count(instr)
    return 1


def _sass_operand_registers(operand, count: int, out: list[str]) -> None:
    """Append every register ``operand`` reads (addresses and descriptors included)."""
    stack = [operand]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is Register:
            _sass_expand(item.name, count, out)
        elif kind is ModifiedOperand:
            stack.append(item.operand)
        elif kind is NegatedPredicate:
            _sass_expand(item.register.name, 1, out)
        elif kind is MemoryRef:
            if item.descriptor is not None:
                _sass_expand(item.descriptor.name, 2, out)
            if item.base is not None:
                _sass_expand(item.base.name, 2 if item.wide else 1, out)
            if item.uniform is not None:
                _sass_expand(item.uniform.name, 1, out)
        elif kind is ConstantRef:
            if type(item.bank) is Register:
                _sass_expand(item.bank.name, 1, out)
            if item.index is not None:
                _sass_expand(item.index.name, 1, out)
        elif kind is DescriptorRef:
            stack.extend(reversed(item.elements))


#: :func:`_sass_registers` of the SASS instructions met lately, by ``id`` (the instruction
#: is kept in its entry, so the id stays its own): the lifter, the CFG and the slicing of
#: :mod:`kernelcheck.sass.relevance` each ask for the same instructions' registers.
_SASS_REGISTERS: dict[int, tuple[Instruction, tuple[str, ...], tuple[str, ...]]] = {}
#: The same answers by the instruction's text (opcode, modifiers, operands, guard): the
#: kernels of a library repeat most of their instructions (the same address arithmetic in
#: every instantiation of a template), and hashing the text costs less than reading it.
_SASS_REGISTERS_BY_TEXT: dict[tuple, tuple[tuple[str, ...], tuple[str, ...]]] = {}
_SASS_REGISTERS_KEPT = 1 << 17


def _sass_registers(instr: Instruction) -> tuple[Instruction, tuple[str, ...],
                                                 tuple[str, ...]]:
    """``(instr, defs, uses)`` of a SASS instruction, from the memo when there."""
    found = _SASS_REGISTERS.get(id(instr))
    if found is not None and found[0] is instr:
        return found
    text = (instr.opcode, instr.modifiers, instr.operands, instr.guard)
    registers = _SASS_REGISTERS_BY_TEXT.get(text)
    if registers is None:
        registers = (_sass_defs(instr), _sass_uses(instr))
        if len(_SASS_REGISTERS_BY_TEXT) >= _SASS_REGISTERS_KEPT:
            _SASS_REGISTERS_BY_TEXT.clear()
        _SASS_REGISTERS_BY_TEXT[text] = registers
    found = (instr, *registers)
    if len(_SASS_REGISTERS) >= _SASS_REGISTERS_KEPT:
        _SASS_REGISTERS.clear()
    _SASS_REGISTERS[id(instr)] = found
    return found


def _sass_defs(instr: Instruction) -> tuple[str, ...]:
    names: list[str] = []
    if instr.opcode == "BSSY" and instr.operands and type(instr.operands[0]) is Register:
        _sass_expand(instr.operands[0].name, 1, names)
        return _dedup(names)
    if instr.opcode == "R2P" and instr.operands:
        register = _sass_register(instr.operands[0])
        if register is not None:
            _sass_expand(register.name, 1, names)
        return _dedup(names)
    if instr.opcode == "P2R" or instr.opcode not in SASS_KNOWN_OPCODES and (
            instr.opcode not in _SASS_NO_DEFS):
        # Unknown: the first register is a (may-)definition, sized from its modifiers.
        first = instr.operands[0] if instr.operands else None
        if type(first) is Register:
            _sass_expand(first.name, _sass_operand_count(instr, 0, True), names)
        return _dedup(names)
    for position in range(_sass_destination_count(instr)):
        _sass_expand(instr.operands[position].name,
                     _sass_operand_count(instr, position, True), names)
    return _dedup(names)


def _sass_uses(instr: Instruction) -> tuple[str, ...]:
    names: list[str] = []
    if instr.guard is not None and instr.guard.register not in SASS_CONSTANT_REGISTERS:
        names.append(instr.guard.register)
    operands = instr.operands
    if instr.opcode == "BSSY":
        return _dedup(names)
    if instr.opcode == "R2P":
        for operand in operands[1:]:
            _sass_operand_registers(operand, 1, names)
        return _dedup(names)
    if instr.opcode == "P2R" or instr.opcode not in SASS_KNOWN_OPCODES:
        skip = 1 if operands and type(operands[0]) is Register and (
            instr.opcode not in _SASS_NO_DEFS) else 0
    else:
        skip = _sass_destination_count(instr)
    for position in range(skip, len(operands)):
        operand = operands[position]
        register = _sass_register(operand)
        count = 1
        if register is not None and not _is_predicate(register.name):
            count = _sass_operand_count(instr, position, False)
        _sass_operand_registers(operand, count, names)
    return _dedup(names)


def _sass_memory_spaces(instr: Instruction) -> tuple[str, ...]:
    opcode = instr.opcode
    if opcode in _SASS_GLOBAL:
        return ("global",)
    if opcode in _SASS_GENERIC:
        return ("generic",)
    if opcode in _SASS_SHARED:
        return ("shared",)
    if opcode in _SASS_LOCAL:
        return ("local",)
    if opcode in _SASS_CONST:
        return ("const",)
    if opcode in _SASS_TEXTURE:
        return ("texture",)
    if opcode in _SASS_SURFACE:
        return ("surface",)
    return _SASS_COPIES.get(opcode, ())


_MULTIMEM_VALUE = re.compile(r"^(?:F32ADD\.)?(F32|F16|BF16|E4M3|E5M2)(?:x(\d+))?$")
_MULTIMEM_BYTES = {"F32": 4, "F16": 2, "BF16": 2, "E4M3": 1, "E5M2": 1}


def ldgmc_width(modifiers: tuple[str, ...]) -> int | None:
    """Bytes an ``LDGMC`` (``multimem.ld_reduce``) reads: its value type times its vector
    count (``ADD.F32x4``: 16, ``F32ADD.BF16x8``: 16), or None when no modifier says.

    Examples
    --------
    >>> ldgmc_width(("E", "ADD", "F32x4", "RN", "STRONG", "SYS"))
    16
    >>> ldgmc_width(("E", "F32ADD", "BF16x2", "RN"))
    4
    """
    for modifier in modifiers:
        found = _MULTIMEM_VALUE.match(modifier)
        if found and modifier != "F32ADD":
            return _MULTIMEM_BYTES[found.group(1)] * int(found.group(2) or 1)
    return None


def _sass_access_width(instr: Instruction) -> int | None:
    opcode = instr.opcode
    if opcode == "LDGMC":
        return ldgmc_width(instr.modifiers)
    if opcode not in (_SASS_GLOBAL | _SASS_GENERIC | _SASS_SHARED | _SASS_LOCAL
                      | _SASS_CONST) or opcode in ("LDSM", "STSM"):
        return None
    for modifier in instr.modifiers:
        width = _SASS_WIDTH_MODIFIERS.get(modifier)
        if width is not None:
            return width
    return 4


def access_kind(instr: Instruction) -> str | None:
    """How ``instr`` touches memory: ``"read"``, ``"write"``, ``"atomic"`` or ``"copy"``.

    ``None`` when it accesses no memory (see :func:`memory_spaces`). Atomics and
    reductions (``atom``/``red``, SASS ``ATOMG``/``REDG``/``RED``/``ATOMS``) are
    ``"atomic"``; copies between two spaces (``cp.async``, ``LDGSTS``, ``UTMALDG``) are
    ``"copy"``.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Instruction
    >>> access_kind(Instruction("STG", ("E",))), access_kind(Instruction("ld", ("global",)))
    ('write', 'read')
    """
    spaces = memory_spaces(instr)
    if not spaces:
        return None
    opcode = instr.opcode
    if _is_sass(instr):
        if opcode in _SASS_ATOMIC:
            return "atomic"
        if opcode in _SASS_COPIES:
            return "copy"
        return "write" if opcode in _SASS_WRITES else "read"
    if opcode in ("atom", "red", "sured"):
        return "atomic"
    if opcode == "cp" or len(spaces) > 1:
        return "copy"
    if opcode in ("st", "stmatrix", "sust") or opcode.startswith("st"):
        return "write"
    return "read"
