"""Build a Kernel IR :class:`~kernelcheck.ir.nodes.Function` from disassembled SASS.

Each instruction is parsed by :mod:`kernelcheck.sass.grammar`; then code addresses become
labels so that :attr:`Function.blocks` splits where control can arrive:

* ``BRA 0x180``, ``JMP 0x180`` and ``BSSY B0, 0x180`` (nvdisasm ``-json`` prints absolute
  offsets in the function's ``.text`` section) get the operand ``Symbol(".L_0x180")`` and a
  :class:`Label` ``.L_0x180`` before the instruction at that offset. A target that is not
  the offset of an instruction keeps its label name, so the CFG builder reports it as an
  unknown label instead of guessing.
* ``CALL.REL.NOINC $callee$...`` names a local subroutine placed after the kernel's code;
  when the cubin's symbol table gives its offset, a label of that name is placed there. A
  subroutine without a symbol (``CALL.REL.NOINC 0xc1d0``: ptxas's 64-bit division on
  uniform registers in CUTLASS's grouped GEMMs) is called at an offset, which becomes a
  label as a branch target does.
* The listing form ``BRA `(.L_x_12)`` keeps nvdisasm's own label names.

Source positions: ``Instruction.pos`` is ``SourcePos(line=offset, column=0)``, where
``offset`` is the instruction's byte offset in the function's ``.text`` section (16 bytes
per instruction since sm_70). Errors name the instruction number (1-based) as the line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kernelcheck.binary.nvdisasm import SassFunction
from kernelcheck.ir.nodes import (
    Function,
    Immediate,
    Instruction,
    Label,
    Param,
    SourceLoc,
    SourcePos,
    Statement,
    Symbol,
)
from kernelcheck.ir.operands import SASS_KNOWN_OPCODES
from kernelcheck.sass.grammar import parse_instruction_text

__all__ = ["function_from_sass", "label_for_offset", "build_function", "ADDRESS_OPCODES"]

#: Opcodes whose immediate operand is a code address in the same function.
ADDRESS_OPCODES = frozenset({"BRA", "JMP", "BSSY", "SSY", "PBK", "PCNT"})


def label_for_offset(offset: int) -> str:
    """The label kernelcheck gives to the code address ``offset``.

    Examples
    --------
    >>> label_for_offset(0x180)
    '.L_0x180'
    """
    return f".L_{offset:#x}"


def _resolve_targets(parts_operands, opcode: str,
                     modifiers: tuple[str, ...] = ()) -> tuple[tuple, list[int]]:
    if opcode not in ADDRESS_OPCODES and not (opcode == "CALL" and "REL" in modifiers):
        return parts_operands, []
    operands = list(parts_operands)
    targets = []
    for position, operand in enumerate(operands):
        if type(operand) is Immediate and operand.kind == "int":
            operands[position] = Symbol(label_for_offset(operand.value))
            targets.append(operand.value)
    return tuple(operands), targets


def build_function(
    name: str,
    rows: Iterable[tuple[int, str]],
    *,
    kind: str = "entry",
    params: tuple[Param, ...] = (),
    directives: tuple[tuple[str, tuple[int, ...]], ...] = (),
    symbols: Mapping[str, int] | None = None,
    labels: Mapping[int, tuple[str, ...]] | None = None,
    filename: str | None = None,
    lines: Iterable[int] | None = None,
    sources: Iterable[SourceLoc | None] | None = None,
) -> Function:
    """Parse ``(offset, text)`` rows into a function with labels at branch targets.

    Parameters
    ----------
    name : str
        The function's symbol.
    rows : iterable of (int, str)
        Byte offset and text of each instruction, in order.
    kind : {"entry", "func"}
        Kernel or device function.
    params : tuple of Param
        The parameter layout (see :mod:`kernelcheck.sass.params`).
    directives : tuple
        Extra directives kept on the function (``EIATTR_PARAM_CBANK``).
    symbols : mapping, optional
        Local code symbols (name → offset), used to place labels at ``CALL`` targets.
    labels : mapping, optional
        Labels already known per offset (from a listing).
    filename : str, optional
        Named in errors.
    lines : iterable of int, optional
        The text line of each row, for errors (default: the row number, from 1).
    sources : iterable of SourceLoc or None, optional
        The CUDA source position of each row (from the cubin's line information).

    Returns
    -------
    Function

    Raises
    ------
    SassSyntaxError
        When an instruction does not parse.
    """
    rows = list(rows)
    line_numbers = list(lines) if lines is not None else range(1, len(rows) + 1)
    locs = list(sources) if sources is not None else [None] * len(rows)
    instructions: list[tuple[int, Instruction]] = []
    wanted: dict[int, list[str]] = {}
    for (offset, text), line, loc in zip(rows, line_numbers, locs, strict=True):
        parts = parse_instruction_text(text, filename=filename, line=line)
        operands, targets = _resolve_targets(parts.operands, parts.opcode, parts.modifiers)
        for target in targets:
            wanted.setdefault(target, []).append(label_for_offset(target))
        if parts.opcode == "CALL" and symbols:
            for operand in operands:
                if type(operand) is Symbol and operand.name in symbols:
                    wanted.setdefault(symbols[operand.name], []).append(operand.name)
        instructions.append((offset, Instruction(
            parts.opcode,
            parts.modifiers,
            operands,
            parts.guard,
            loc,
            len(instructions),
            parts.opcode in SASS_KNOWN_OPCODES,
            SourcePos(offset, 0),
        )))
    for offset, names in (labels or {}).items():
        wanted.setdefault(offset, []).extend(names)
    body: list[Statement] = []
    for offset, instr in instructions:
        for label in dict.fromkeys(wanted.pop(offset, ())):
            body.append(Label(label, SourcePos(offset, 0)))
        body.append(instr)
    end = instructions[-1][0] + 16 if instructions else 0
    for label in dict.fromkeys(wanted.pop(end, ())):
        body.append(Label(label, SourcePos(end, 0)))
    return Function(
        name=name,
        kind=kind,
        params=params,
        directives=directives,
        body=tuple(body),
    )


def function_from_sass(
    sass: SassFunction,
    *,
    kind: str = "entry",
    params: tuple[Param, ...] = (),
    directives: tuple[tuple[str, tuple[int, ...]], ...] = (),
    symbols: Mapping[str, int] | None = None,
    labels: Mapping[int, tuple[str, ...]] | None = None,
    filename: str | None = None,
    files: Mapping[str, int] | None = None,
) -> Function:
    """The Kernel IR of one disassembled function (see :func:`build_function`).

    ``files`` numbers the source files of the instructions' line information (their
    ``SourceLoc.file``); files it does not name are numbered after it in order of appearance.

    Examples
    --------
    >>> from kernelcheck.binary.nvdisasm import SassFunction, SassInstruction
    >>> f = function_from_sass(SassFunction("k", (
    ...     SassInstruction(0, "@P0 BRA 0x20"), SassInstruction(16, "NOP"),
    ...     SassInstruction(32, "EXIT"))))
    >>> [b.name for b in f.blocks]
    ['$bb0', '$bb1', '.L_0x20']
    """
    numbers = dict(files or {})
    locs = []
    for i in sass.instructions:
        if i.source is None:
            locs.append(None)
            continue
        number = numbers.setdefault(i.source[0], len(numbers) + 1)
        locs.append(SourceLoc(number, i.source[1], 0))
    return build_function(
        sass.name,
        ((i.offset, i.text) for i in sass.instructions),
        sources=locs,
        kind=kind,
        params=params,
        directives=directives,
        symbols=symbols,
        labels=labels,
        filename=filename,
    )
