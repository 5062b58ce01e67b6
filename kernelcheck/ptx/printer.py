"""Print Kernel IR back to PTX text.

The printed text parses back to an equal module: ``parse_ptx(print_ptx(m)) == m`` for every
module the parser produced (source positions are not part of equality). Layout follows
nvcc's: one statement per line, instructions indented by a tab, ``.loc`` lines emitted
whenever the debug location changes. The fault-injection rewriter builds on this printer.
"""

from __future__ import annotations

from kernelcheck.ir.nodes import (
    Address,
    BracketList,
    BranchTargets,
    CallPrototype,
    CallTargets,
    ConstantRef,
    DescriptorRef,
    Expression,
    FileDirective,
    Function,
    Immediate,
    Instruction,
    Label,
    MemoryRef,
    ModifiedOperand,
    Module,
    NegatedPredicate,
    Param,
    ParenList,
    Pragma,
    PredicatePair,
    Register,
    RegisterDecl,
    ScopeClose,
    ScopeOpen,
    SectionDirective,
    Sink,
    SourceLoc,
    SpecialRegister,
    Symbol,
    UnknownDirective,
    VariableDecl,
    VectorOperand,
)

__all__ = ["print_ptx", "format_instruction", "format_operand", "format_function"]


def print_ptx(module: Module) -> str:
    """The PTX text of ``module``.

    Examples
    --------
    >>> from kernelcheck.ptx.parser import parse_ptx
    >>> m = parse_ptx(".version 8.0\\n.target sm_80\\n.address_size 64\\n"
    ...               ".visible .entry k() { ret; }")
    >>> parse_ptx(print_ptx(m)) == m
    True
    """
    out: list[str] = []
    if module.version is not None:
        out.append(f".version {module.version}")
    if module.target:
        out.append(f".target {', '.join(module.target)}")
    if module.address_size is not None:
        out.append(f".address_size {module.address_size}")
    out.append("")
    for item in module.items:
        kind = type(item)
        if kind is Function:
            out.append(format_function(item))
        elif kind is VariableDecl:
            out.append(_format_variable(item) + ";")
        elif kind is FileDirective:
            extra = "".join(f", {v}" for v in (item.timestamp, item.size) if v is not None)
            out.append(f'.file {item.index} "{item.path}"{extra}')
        elif kind is SectionDirective:
            out.append(_format_section(item))
        elif kind is Pragma:
            out.append(_format_pragma(item) + ";")
        elif kind is UnknownDirective:
            out.append(" ".join((item.name, *item.arguments)))
        out.append("")
    return "\n".join(out)


def format_function(function: Function) -> str:
    """The PTX text of one ``.entry`` or ``.func``, body included."""
    head = " ".join((*function.attributes, f".{function.kind}"))
    if function.return_params:
        head += " (" + ", ".join(_format_param(p) for p in function.return_params) + ")"
    head += f" {function.name}"
    lines = [head + "(" if function.params or function.body is None else head + "()"]
    if function.params:
        lines.extend(
            f"\t{_format_param(p)}{',' if k + 1 < len(function.params) else ''}"
            for k, p in enumerate(function.params)
        )
        lines.append(")")
    elif function.body is None:
        lines[-1] = head
    for name, values in function.directives:
        if name == ".pragma":
            lines.append(f'.pragma {", ".join(_quote(v) for v in values)};')
        else:
            lines.append(f"{name} {', '.join(str(v) for v in values)}".rstrip())
    if function.body is None:
        lines.append(";")
        return "\n".join(lines)
    lines.append("{")
    loc: SourceLoc | None = None
    depth = 1
    for statement in function.body:
        kind = type(statement)
        indent = "\t" * depth
        if kind is Instruction:
            if statement.loc != loc and statement.loc is not None:
                lines.append(f"{indent}{_format_loc(statement.loc)}")
            loc = statement.loc
            lines.append(f"{indent}{format_instruction(statement)};")
        elif kind is Label:
            lines.append(f"{statement.name}:")
        elif kind is RegisterDecl:
            lines.append(f"{indent}{_format_register_decl(statement)};")
        elif kind is VariableDecl:
            lines.append(f"{indent}{_format_variable(statement)};")
        elif kind is ScopeOpen:
            lines.append(f"{indent}{{")
            depth += 1
        elif kind is ScopeClose:
            depth -= 1
            lines.append(f"{chr(9) * depth}}}")
        elif kind is Pragma:
            lines.append(f"{indent}{_format_pragma(statement)};")
        elif kind is CallPrototype:
            returns = f"({_format_param(statement.return_param)})" if (
                statement.return_param) else "()"
            params = ", ".join(_format_param(p) for p in statement.params)
            lines.append(f"{statement.name}: .callprototype {returns} _ ({params});")
        elif kind is BranchTargets:
            lines.append(f"{statement.name}: .branchtargets {', '.join(statement.labels)};")
        elif kind is CallTargets:
            lines.append(f"{statement.name}: .calltargets {', '.join(statement.functions)};")
    lines.append("}")
    return "\n".join(lines)


def format_instruction(instr: Instruction) -> str:
    """One instruction as PTX text (guard, opcode with modifiers, operands), without ``;``.

    SASS instructions (upper-case opcodes) are printed in nvdisasm's notation.
    """
    if instr.opcode[:1].isupper():
        from kernelcheck.sass.printer import format_sass_instruction

        return format_sass_instruction(instr)
    text = instr.full_opcode
    if instr.operands:
        text += " " + ", ".join(format_operand(o) for o in instr.operands)
    if instr.guard is not None:
        bang = "!" if instr.guard.negated else ""
        text = f"@{bang}{instr.guard.register} {text}"
    return text


def format_operand(operand) -> str:
    """One operand as PTX text."""
    kind = type(operand)
    if kind is Register or kind is SpecialRegister or kind is Symbol:
        return operand.name
    if kind is Immediate:
        return _format_immediate(operand)
    if kind is Address:
        if operand.base is None:
            return f"[{operand.offset}]"
        if operand.offset:
            return f"[{operand.base.name}+{operand.offset}]"
        return f"[{operand.base.name}]"
    if kind is VectorOperand:
        return "{" + ", ".join(format_operand(e) for e in operand.elements) + "}"
    if kind is ParenList:
        return "(" + ", ".join(format_operand(e) for e in operand.elements) + ")"
    if kind is BracketList:
        return "[" + ", ".join(format_operand(e) for e in operand.elements) + "]"
    if kind is Sink:
        return "_"
    if kind is NegatedPredicate:
        return f"!{operand.register.name}"
    if kind is PredicatePair:
        return f"{format_operand(operand.first)}|{format_operand(operand.second)}"
    if kind is Expression:
        return operand.text
    if kind in (ConstantRef, MemoryRef, DescriptorRef, ModifiedOperand):
        from kernelcheck.sass.printer import format_sass_operand

        return format_sass_operand(operand)
    raise TypeError(f"cannot print operand {operand!r}")


def _format_immediate(immediate: Immediate) -> str:
    if immediate.kind == "f32":
        return f"0f{immediate.value:08X}"
    if immediate.kind == "f64":
        return f"0d{immediate.value:016X}"
    if immediate.kind == "float":
        return repr(float(immediate.value))
    return str(immediate.value)


def _format_loc(loc: SourceLoc) -> str:
    text = f".loc\t{loc.file} {loc.line} {loc.column}"
    if loc.function_name is not None:
        text += f", function_name {loc.function_name}"
    if loc.inlined_at is not None:
        at = loc.inlined_at
        text += f", inlined_at {at.file} {at.line} {at.column}"
    return text


def _format_param(param: Param) -> str:
    parts = [f".{param.space}"]
    parts.extend(a for a in param.attributes if a.startswith(".attribute"))
    if param.align is not None:
        parts.append(f".align {param.align}")
    if param.vector:
        parts.append(f".{param.vector}")
    parts.append(f".{param.type}")
    # `.ptr`, its state space and the pointee `.align N` follow the type, in source order.
    parts.extend(a for a in param.attributes if not a.startswith(".attribute"))
    return " ".join(parts) + f" {param.name}" + _format_dims(param.array)


def _format_dims(array: tuple) -> str:
    return "".join(f"[{'' if d is None else d}]" for d in array)


def _format_variable(decl: VariableDecl) -> str:
    linkage = [a for a in decl.attributes if a in (".extern", ".visible", ".weak", ".common")]
    other = [a for a in decl.attributes if a not in linkage]
    parts = [*linkage, f".{decl.space}", *other]
    if decl.align is not None:
        parts.append(f".align {decl.align}")
    if decl.vector:
        parts.append(f".{decl.vector}")
    parts.append(f".{decl.type}")
    text = " ".join(parts) + f" {decl.name}" + _format_dims(decl.array)
    if decl.initializer is not None:
        values = ", ".join(format_operand(v) for v in decl.initializer)
        text += f" = {{{values}}}" if decl.array else f" = {values}"
    return text


def _format_register_decl(decl: RegisterDecl) -> str:
    vector = f" .{decl.vector}" if decl.vector else ""
    if decl.count is not None:
        return f".reg{vector} .{decl.type} {decl.names[0]}<{decl.count}>"
    return f".reg{vector} .{decl.type} {', '.join(decl.names)}"


def _format_pragma(pragma: Pragma) -> str:
    if pragma.values and pragma.values[0] == ".alias":
        return f".alias {pragma.values[1]}, {pragma.values[2]}"
    return ".pragma " + ", ".join(_quote(v) for v in pragma.values)


def _format_section(section: SectionDirective) -> str:
    lines = [f".section {section.name}", "{"]
    for kind, values in section.entries:
        if kind == "label":
            lines.append(f"{values[0].name}:")
        else:
            lines.append(f".{kind} " + ", ".join(format_operand(v) for v in values))
    lines.append("}")
    return "\n".join(lines)


def _quote(value: str) -> str:
    return f'"{value}"'
