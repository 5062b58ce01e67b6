"""Absolute calls in SASS: which runtime function a ``CALL.ABS`` calls.

Code calls a function outside the kernel (``__assertfail`` behind ``assert`` and
``CUDA_KERNEL_ASSERT``, ``vprintf`` behind ``printf``) through an address the loader writes
into module constant bank 4; the relocation table of ``.nv.constant4`` names the function
at each doubleword. The call sequence compilers emit is::

    MOV R2, 0x0                 ; or c[0x4][imm] directly
    LDC.64 R2, c[0x4][R2]
    ...
    CALL.ABS.NOINC R2

A SASS function built from a cubin carries the bank's function addresses as the
directive ``("CBANK_FUNCTIONS", ((bank, offset, symbol), ...))``; :func:`call_target`
follows the call register back to that load inside the calling block, and gives up
(``None``) on anything else: a load in another block, a guarded definition, an index that
is not an immediate. A ``None`` target keeps the call unmodelled.

The analysis models two targets. ``vprintf`` writes only the runtime's printf buffer (no
memory the program reads); the registers it may change are not known, so every register
becomes opaque after the call. ``__assertfail``: a failed device-side assertion aborts the
launch with ``cudaErrorAssert``, a sticky error after which the context cannot be used,
so no run in which the call happens can be resumed or re-executed; for the runs that can,
the call is never reached. The lifter therefore lifts it as ``trap`` (the thread stops,
writing nothing the program reads), which is also what the emulator does with PTX's
``call __assertfail``.
"""

from __future__ import annotations

import struct

from kernelcheck.ir.nodes import ConstantRef, Function, Immediate, Instruction, Register
from kernelcheck.ir.operands import defs

__all__ = ["CBANK_FUNCTIONS_DIRECTIVE", "CBANK_OBJECTS_DIRECTIVE", "CBANK2_DIRECTIVE",
           "ASSERT_FAIL", "PRINTF", "bank_functions", "bank_objects", "bank2_words",
           "call_target", "move_immediate",
           "stops_thread", "BRANCH_TARGETS_DIRECTIVE", "decode_branch_targets",
           "branch_targets"]

CBANK_FUNCTIONS_DIRECTIVE = "CBANK_FUNCTIONS"
#: ``("CBANK_OBJECTS", ((bank, offset, symbol), ...))``: the addresses of module variables
#: (``STT_OBJECT`` symbols, libdevice's tables among them) that the loader writes into
#: constant bank 4, named by the relocations of ``.nv.constant4``.
CBANK_OBJECTS_DIRECTIVE = "CBANK_OBJECTS"
#: ``("CBANK2", ((offset, word), ...))``: the 32-bit words of the function's constant bank 2
#: (compiler constants, ``.nv.constant2.<kernel>``) that no relocation fills in.
CBANK2_DIRECTIVE = "CBANK2"
BRANCH_TARGETS_DIRECTIVE = "EIATTR_INDIRECT_BRANCH_TARGETS"
ASSERT_FAIL = "__assertfail"
#: The device printf: it appends to the runtime's printf buffer, which kernels never read.
PRINTF = "vprintf"
_MOVES = ("MOV", "MOV32I", "UMOV")


def bank_functions(function: Function) -> dict[tuple[int, int], str]:
    """``{(bank, offset): symbol}`` from the function's ``CBANK_FUNCTIONS`` directive."""
    for name, values in function.directives:
        if name == CBANK_FUNCTIONS_DIRECTIVE:
            return {(bank, offset): symbol for bank, offset, symbol in values}
    return {}


def bank_objects(function: Function) -> dict[tuple[int, int], str]:
    """``{(bank, offset): symbol}`` from the function's ``CBANK_OBJECTS`` directive."""
    for name, values in function.directives:
        if name == CBANK_OBJECTS_DIRECTIVE:
            return {(bank, offset): symbol for bank, offset, symbol in values}
    return {}


def bank2_words(function: Function) -> dict[int, int]:
    """``{offset: word}`` from the function's ``CBANK2`` directive."""
    for name, values in function.directives:
        if name == CBANK2_DIRECTIVE:
            return dict(values)
    return {}


def move_immediate(instr: Instruction) -> int | None:
    """The immediate a move writes (``MOV R2, 0x0``, ``IMAD.MOV.U32 R2, RZ,
    RZ, 0x8``), or None."""
    ops = instr.operands
    if instr.opcode in _MOVES and len(ops) == 2 and type(ops[1]) is Immediate:
        return ops[1].value if ops[1].kind == "int" else None
    if instr.opcode == "IMAD" and "MOV" in instr.modifiers and len(ops) == 4 and \
            type(ops[3]) is Immediate and ops[3].kind == "int" and all(
                type(o) is Register and o.name in ("RZ", "URZ") for o in ops[1:3]):
        return ops[3].value
    return None


def _definition(before: tuple[Instruction, ...], name: str) -> tuple[int, Instruction] | None:
    for position in range(len(before) - 1, -1, -1):
        instr = before[position]
        if name in defs(instr):
            return position, instr
    return None


def call_target(function: Function, block_instructions: tuple[Instruction, ...],
                call: Instruction) -> str | None:
    """The symbol a ``CALL.ABS`` calls (see the module documentation), or None.

    Parameters
    ----------
    function : Function
        The calling SASS function (for its ``CBANK_FUNCTIONS`` directive).
    block_instructions : tuple of Instruction
        The instructions of the block holding ``call``.
    call : Instruction
        The ``CALL.ABS`` instruction.

    Examples
    --------
    >>> from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
    >>> from kernelcheck.sass.function import function_from_sass
    >>> f = function_from_sass(SassFunction("k", (
    ...     SassInstruction(0, "MOV R2, 0x0"),
    ...     SassInstruction(16, "LDC.64 R2, c[0x4][R2]"),
    ...     SassInstruction(32, "CALL.ABS.NOINC R2"),
    ...     SassInstruction(48, "EXIT"))),
    ...     directives=((CBANK_FUNCTIONS_DIRECTIVE, ((4, 0, "__assertfail"),)),))
    >>> call_target(f, f.blocks[0].instructions, f.instructions[2])
    '__assertfail'
    """
    table = bank_functions(function)
    if not table or not call.operands:
        return None
    operand = call.operands[0]
    position = next((k for k, i in enumerate(block_instructions) if i is call), None)
    if position is None:
        return None
    before = block_instructions[:position]
    if type(operand) is ConstantRef:
        load = operand
    elif type(operand) is Register:
        found = _definition(before, operand.name)
        if found is None:
            return None
        position, instr = found
        if instr.guard is not None or instr.opcode != "LDC" or "64" not in instr.modifiers \
                or len(instr.operands) != 2 or type(instr.operands[1]) is not ConstantRef \
                or instr.operands[0] != operand:
            return None
        load = instr.operands[1]
        before = before[:position]
    else:
        return None
    if type(load.bank) is not int:
        return None
    offset = load.static_offset
    if offset is None:
        found = _definition(before, load.index.name)
        if found is None or found[1].guard is not None:
            return None
        value = move_immediate(found[1])
        if value is None:
            return None
        offset = load.offset + value
    return table.get((load.bank, offset))


def stops_thread(function: Function, block_instructions: tuple[Instruction, ...],
                 call: Instruction) -> bool:
    """Whether ``call`` is an unconditional ``CALL.ABS`` of ``__assertfail``: the thread
    never runs the instructions after it."""
    return "ABS" in call.modifiers and (call.guard is None or (
        call.guard.register in ("PT", "UPT") and not call.guard.negated)) and call_target(
        function, block_instructions, call) == ASSERT_FAIL


def decode_branch_targets(payload: bytes) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """The entries of an EIATTR_INDIRECT_BRANCH_TARGETS payload: ``(branch offset,
    target offsets)`` per indirect branch (``BRX``, ``JMX``) of a kernel.

    Each entry is ``u32 branch offset, u32 (zero), u32 count, count x u32 target``
    (checked against nvdisasm, which draws these edges in its control-flow graphs). A
    payload that does not decode exactly gives ``()``: the branches stay unmodelled.

    Examples
    --------
    >>> import struct
    >>> decode_branch_targets(struct.pack("<IIIII", 0x100, 0, 2, 0x200, 0x300))
    ((256, (512, 768)),)
    """
    entries = []
    at = 0
    while at + 12 <= len(payload):
        branch, _, count = struct.unpack_from("<III", payload, at)
        at += 12
        if at + 4 * count > len(payload):
            return ()
        entries.append((branch, struct.unpack_from(f"<{count}I", payload, at)))
        at += 4 * count
    return tuple(entries) if at == len(payload) else ()


def branch_targets(function: Function, instr: Instruction) -> tuple[int, ...] | None:
    """The code offsets an indirect branch may jump to, or None when not recorded."""
    if instr.pos is None:
        return None
    for name, values in function.directives:
        if name == BRANCH_TARGETS_DIRECTIVE:
            for branch, targets in values:
                if branch == instr.pos.line:
                    return tuple(targets)
    return None
