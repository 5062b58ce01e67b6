"""Print SASS operands and instructions of the Kernel IR in nvdisasm's notation.

The text parses back to equal parts: ``parse_instruction_text(format_sass_instruction(i))``
gives the opcode, modifiers, operands and guard of ``i`` (labels print as their names).
"""

from __future__ import annotations

import math

from kernelcheck.ir.nodes import (
    ConstantRef,
    DescriptorRef,
    Immediate,
    Instruction,
    MemoryRef,
    ModifiedOperand,
    NegatedPredicate,
    Register,
    SpecialRegister,
    Symbol,
    VectorOperand,
)

__all__ = ["format_sass_operand", "format_sass_instruction"]


def _number(value: int) -> str:
    return f"-{-value:#x}" if value < 0 else f"{value:#x}"


def _immediate(operand: Immediate) -> str:
    value = operand.value
    if operand.kind == "float":
        if math.isnan(value):
            return "+QNAN"
        if math.isinf(value):
            return "+INF" if value > 0 else "-INF"
        return repr(float(value))
    return _number(int(value))


def _terms(*parts: str) -> str:
    shown = [p for p in parts if p]
    text = "+".join(shown)
    return text or "0x0"


def format_sass_operand(operand) -> str:
    """One operand as nvdisasm writes it.

    Examples
    --------
    >>> format_sass_operand(MemoryRef(Register("R2"), 12, wide=True,
    ...                               descriptor=Register("UR4")))
    'desc[UR4][R2.64+0xc]'
    """
    kind = type(operand)
    if kind is Symbol and operand.name.startswith("."):
        return f"`({operand.name})"  # a label, as the listing writes branch targets
    if kind is Register or kind is SpecialRegister or kind is Symbol:
        return operand.name
    if kind is Immediate:
        return _immediate(operand)
    if kind is NegatedPredicate:
        return f"!{operand.register.name}"
    if kind is ConstantRef:
        bank = operand.bank.name if type(operand.bank) is Register else _number(operand.bank)
        prefix = "cx" if type(operand.bank) is Register else "c"
        index = operand.index.name if operand.index is not None else ""
        offset = _number(operand.offset) if operand.offset or not index else ""
        return f"{prefix}[{bank}][{_terms(index, offset)}]"
    if kind is MemoryRef:
        base = ""
        if operand.base is not None:
            suffixes = list(operand.base_modifiers)
            if operand.wide:
                suffixes.insert(0, "64")
            if operand.scale != 1:
                suffixes.append(f"X{operand.scale}")
            base = ".".join([operand.base.name, *suffixes])
        uniform = operand.uniform.name if operand.uniform is not None else ""
        offset = _number(operand.offset) if operand.offset else ""
        text = f"[{_terms(base, uniform, offset)}]"
        if operand.descriptor is not None:
            text = f"desc[{operand.descriptor.name}]{text}"
        return text
    if kind is VectorOperand:
        return "{" + ",".join(format_sass_operand(e) for e in operand.elements) + "}"
    if kind is DescriptorRef:
        return f"{operand.kind}[{'+'.join(format_sass_operand(e) for e in operand.elements)}]"
    if kind is ModifiedOperand:
        text = format_sass_operand(operand.operand)
        if operand.absolute:
            text = f"|{text}|"
        if operand.negate:
            text = f"-{text}"
        if operand.invert:
            text = f"~{text}"
        return ".".join([text, *operand.suffixes])
    raise TypeError(f"cannot print SASS operand {operand!r}")


def format_sass_instruction(instr: Instruction) -> str:
    """The instruction as nvdisasm prints it, without the trailing ``;``.

    Examples
    --------
    >>> from kernelcheck.ir.nodes import Guard
    >>> format_sass_instruction(Instruction("EXIT", guard=Guard("P0", True)))
    '@!P0 EXIT'
    """
    guard = ""
    if instr.guard is not None:
        guard = f"@{'!' if instr.guard.negated else ''}{instr.guard.register} "
    operands = ", ".join(format_sass_operand(o) for o in instr.operands)
    return f"{guard}{instr.full_opcode}{' ' + operands if operands else ''}"
