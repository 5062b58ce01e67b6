"""Spill slots of the thread's stack frame read as registers.

When ptxas runs out of registers it keeps values in the thread's stack frame: ``R1`` is
set once at the kernel's start to the bottom of the frame, and values are stored to and
loaded back from fixed offsets of it::

    LDC R1, c[0x0][0x28]            ; the stack pointer
    IADD3 R1, R1, -0x18, RZ         ; a frame of 0x18 bytes
    ...
    STL [R1+0x4], R8                ; a 64-bit pointer spilled as two words
    STL [R1], R4
    ...
    LDL.LU R27, [R1+0x4]            ; loaded back in a loop, advanced, stored again
    LDL.LU R25, [R1]

Read as memory, a reloaded pointer is an opaque value and every store through it is "a
write at an unknown address". :func:`promote_stack_slots` rewrites each such access of a
frame word into a copy between the data register and a register of its own (the word at
``[R1+k]`` becomes ``R{SLOT_BASE + k/4}``), so the lifter and the analysis follow spilled
values as they follow registers: through joins, loops (a spilled induction variable is an
induction variable) and 64-bit pairs (``STL.64`` of ``R4`` becomes ``MOV.64`` into an
aligned pair of slot registers).

This is exact when nothing else can reach those words; the rewrite is made only when the
code shows it, and the function is left as it is otherwise:

* ``R1`` is written only in the entry block (which nothing branches back to), unguarded,
  before the block's first local access: its value is then the same at every access.
* ``R1`` is read only as the address of those accesses and by its own definitions: no
  pointer into the frame is made (``MOV R4, R1``, the address of a local array) and so no
  other instruction can write it. The stack pointer's constant (``c[0x0][0x28]``) is read
  only there too, and no constant of bank 0 is read at a register index.
* Every local access is an ``LDL``/``STL`` of 4, 8 or 16 bytes at ``[R1 + k]``, ``k`` a
  multiple of the access width; byte and half-word accesses, other bases and local
  atomics leave the function as it is.
* Code no branch of the kernel reaches (the bodies of the subroutines that
  :mod:`kernelcheck.sass.inline` summarised by the registers they write, which are only
  entered by their calls) writes no local memory and does not define ``R1``, and every
  call left in the code is such a summarised call: nothing outside the rewritten accesses
  can write the frame.
* An instruction the operand tables do not know does not name ``R0`` or ``R1`` (it might
  read or write the stack pointer as half of a pair).

A load with the last-use hint (``LDL.LU``) lets the hardware drop the cache line without
writing it back, so the word is unknown afterwards: after the copy, the slot register is
loaded from local memory, which the lifter takes as an opaque value.
"""

from __future__ import annotations

from dataclasses import replace

from kernelcheck.ir.nodes import (
    ConstantRef,
    Immediate,
    Instruction,
    MemoryRef,
    ModifiedOperand,
    Register,
)
from kernelcheck.ir.operands import SASS_KNOWN_OPCODES, defs, memory_spaces, uses
from kernelcheck.sass.inline import InlinedFunction
from kernelcheck.sass.lift_state import block_successors

__all__ = ["SLOT_BASE", "promote_stack_slots", "slot_register"]

#: The register number of the frame word at ``[R1+0]``: far above the 255 registers of
#: the hardware, so slot registers never meet real ones.
SLOT_BASE = 4096
_STACK_POINTER = "R1"
#: The bytes of constant bank 0 that hold the initial stack pointer.
_STACK_CONSTANT = range(0x28, 0x2C)
_WIDTHS = {"64": 8, "128": 16}
_NARROW = frozenset({"U8", "S8", "U16", "S16"})


def slot_register(offset: int) -> str:
    """The SASS name of the register standing for the frame word at ``[R1 + offset]``."""
    return f"R{SLOT_BASE + offset // 4}"


def _width(instr: Instruction) -> int | None:
    """The bytes an ``LDL``/``STL`` moves, ``None`` for byte and half-word accesses."""
    if _NARROW.intersection(instr.modifiers):
        return None
    return next((_WIDTHS[m] for m in instr.modifiers if m in _WIDTHS), 4)


def _frame_offset(instr: Instruction) -> int | None:
    """``k`` when ``instr`` is an ``LDL``/``STL`` of a whole aligned slot at ``[R1 + k]``."""
    if instr.opcode not in ("LDL", "STL") or len(instr.operands) != 2:
        return None
    ref = instr.operands[1] if instr.opcode == "LDL" else instr.operands[0]
    data = instr.operands[0] if instr.opcode == "LDL" else instr.operands[1]
    width = _width(instr)
    if type(ref) is not MemoryRef or ref.base is None or ref.base.name != _STACK_POINTER or (
            ref.wide or ref.scale != 1 or ref.base_modifiers or ref.descriptor is not None
            or (ref.uniform is not None and ref.uniform.name != "URZ")):
        return None
    if width is None or ref.offset < 0 or ref.offset % width:
        return None
    if type(data) is not Register or not data.name.startswith("R") or (
            data.name == "RZ" and instr.opcode == "LDL"):
        return None
    if _STACK_POINTER in _data_registers(data.name, width):
        return None  # the stack pointer itself stored: a pointer into the frame
    return ref.offset


def _data_registers(first: str, width: int) -> tuple[str, ...]:
    if first == "RZ":
        return ()
    number = int(first[1:]) if first[1:].isdigit() else None
    if number is None:
        return (first,)
    return tuple(f"R{number + k}" for k in range(max(width // 4, 1)))


def _reads_stack_constant(instr: Instruction) -> bool:
    for operand in instr.operands:
        if type(operand) is ConstantRef and operand.bank == 0:
            if operand.index is not None and operand.index.name not in ("RZ", "URZ"):
                return True
            if any(operand.offset <= b < operand.offset + 8 for b in _STACK_CONSTANT):
                return True
    return False


def _names_stack_pointer(instr: Instruction) -> bool:
    """Whether an instruction the operand tables do not know names ``R0`` or ``R1``."""
    for operand in instr.operands:
        register = operand.base if type(operand) is MemoryRef else operand
        if type(register) is Register and register.name in ("R0", _STACK_POINTER):
            return True
    return False


def _may_name_stack_pointer(instr: Instruction) -> bool:
    """Whether ``instr`` may read or write ``R1`` or read a constant of bank 0: it names
    ``R0`` or ``R1`` (a register range that holds ``R1`` starts at one of them) or a
    constant. Exact as a filter: the others need not be looked at further."""
    for operand in instr.operands:
        kind = type(operand)
        if kind is ModifiedOperand:
            operand = operand.operand
            kind = type(operand)
        if kind is Register:
            if operand.name in ("R0", _STACK_POINTER):
                return True
        elif kind is MemoryRef:
            if operand.base is not None and operand.base.name in ("R0", _STACK_POINTER):
                return True
        elif kind is not Immediate:
            return True  # a constant, a predicate form or a list: looked at in full
    return False


def _promotable(function, summarized) -> bool:
    """Whether the rules of the module documentation hold for ``function``."""
    blocks = function.blocks
    if not blocks:
        return False
    successors = block_successors(function)
    entry = blocks[0].index
    if any(entry in targets for targets in successors.values()):
        return False
    reached = {entry}
    stack = [entry]
    while stack:
        for successor in successors[stack.pop()]:
            if successor not in reached:
                reached.add(successor)
                stack.append(successor)
    accesses = 0
    for block in blocks:
        in_entry = block.index == entry
        prologue = in_entry
        for instr in block.instructions:
            if instr.opcode not in SASS_KNOWN_OPCODES and _names_stack_pointer(instr):
                return False
            spaces = memory_spaces(instr)
            local = "local" in spaces
            if local and block.index not in reached and instr.opcode != "LDL":
                return False  # a summarised subroutine writing local memory
            if local:
                if _frame_offset(instr) is None:
                    return False
                accesses += 1
                prologue = False
                continue
            if instr.opcode == "CALL" and (block.index not in reached or (
                    instr.index not in summarized)):
                return False
            if not _may_name_stack_pointer(instr):
                continue
            written = _STACK_POINTER in defs(instr)
            if written and not (prologue and instr.guard is None):
                return False
            if not written and (_STACK_POINTER in uses(instr) or _reads_stack_constant(instr)):
                return False
    return accesses > 0


def promote_stack_slots(inlined: InlinedFunction) -> InlinedFunction:
    """``inlined`` with its spill slots read as registers, or unchanged (see the module
    documentation).

    Indices move where one access becomes two instructions (a 16-byte access, a
    last-use load): ``origin``, ``refused``, ``summarized`` and ``divisions`` follow.

    Examples
    --------
    >>> from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
    >>> from kernelcheck.sass.function import function_from_sass
    >>> from kernelcheck.sass.inline import inline_subroutines
    >>> f = function_from_sass(SassFunction("k", (
    ...     SassInstruction(0, "LDC R1, c[0x0][0x28]"),
    ...     SassInstruction(16, "IADD3 R1, R1, -0x8, RZ"),
    ...     SassInstruction(32, "STL.64 [R1], R4"),
    ...     SassInstruction(48, "LDL.64 R6, [R1]"),
    ...     SassInstruction(64, "EXIT"))))
    >>> [(i.full_opcode, i.operands[0].name, i.operands[1].name) for i in
    ...  promote_stack_slots(inline_subroutines(f)).function.instructions[2:4]]
    [('MOV.64', 'R4096', 'R4'), ('MOV.64', 'R6', 'R4096')]
    """
    function = inlined.function
    if not any(i.opcode in ("LDL", "STL") for i in function.instructions) or not (
            _promotable(function, inlined.summarized)):
        return inlined
    body: list = []
    origin: list[int] = []
    moved: dict[int, int] = {}
    for statement in function.body:
        if type(statement) is not Instruction:
            body.append(statement)
            continue
        source = inlined.origin[statement.index]
        offset = _frame_offset(statement) if statement.opcode in ("LDL", "STL") else None
        if offset is None:
            moved[statement.index] = len(origin)
            body.append(replace(statement, index=len(origin)))
            origin.append(source)
            continue
        for copy in _copies(statement, offset):
            body.append(replace(copy, index=len(origin)))
            origin.append(source)
    promoted = replace(function, body=tuple(body))
    return InlinedFunction(
        promoted, tuple(origin), {moved[k]: v for k, v in inlined.refused.items()},
        inlined.inlined, {moved[k]: v for k, v in inlined.summarized.items()},
        {moved[k]: v for k, v in inlined.divisions.items()})


def _copies(instr: Instruction, offset: int) -> list[Instruction]:
    """The copies replacing the access ``instr`` of the frame word at ``offset``."""
    width = _width(instr)
    loading = instr.opcode == "LDL"
    data = instr.operands[0] if loading else instr.operands[1]
    copies = []
    for part in range(0, width, 8) if width > 4 else (0,):
        slot = Register(slot_register(offset + part))
        value = data if data.name == "RZ" else Register(_data_registers(data.name, width)[
            part // 4])
        dest, source = (value, slot) if loading else (slot, value)
        copies.append(replace(instr, opcode="MOV", modifiers=("64",) if width > 4 else (),
                              operands=(dest, source)))
    if loading and "LU" in instr.modifiers:
        for part in range(0, width, 4):
            slot = Register(slot_register(offset + part))
            copies.append(replace(instr, modifiers=(), operands=(
                slot, replace(instr.operands[1], offset=offset + part))))
    return copies

