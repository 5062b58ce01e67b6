"""Checks of declarations that need more than one statement: open array sizes, and the
names a function leaves to its module.

Both run in the transformer, during the parse: :func:`complete_array` when an array is
declared, :func:`check_module_names` when the whole module has been read.
"""

from __future__ import annotations

from kernelcheck.ir.nodes import (
    Address,
    BracketList,
    Function,
    NegatedPredicate,
    ParenList,
    Pragma,
    PredicatePair,
    Register,
    SourcePos,
    Symbol,
    VariableDecl,
    VectorOperand,
)
from kernelcheck.ptx.located import LocatedError

__all__ = ["complete_array", "check_module_names"]


def complete_array(name: str, array: tuple, count: int | None, init, attributes,
                    pos: SourcePos | None) -> tuple:
    """The dimensions of ``name[]``: from its initializer (ISA 5.4.3), else open, which
    only an ``.extern`` declaration may be (ptxas: "has incomplete type")."""
    where = (pos.line, pos.column) if pos is not None else None
    if any(d is None for d in array[1:]):
        raise LocatedError(f"array {name}: only the first dimension may be left open",
                           pos=where)
    if init is None:
        if ".extern" in attributes:
            return array
        raise LocatedError(f"array {name}[] has no size: an array without a size must be "
                           ".extern or have an initializer", pos=where)
    inner = 1
    for dim in array[1:]:
        inner *= dim
    elements = count if count is not None else -(-len(init) // inner)
    return (elements, *array[1:])


def check_module_names(items: list, unresolved: list) -> None:
    """Every name a function left unresolved must be a module-scope function or variable."""
    known = {"WARP_SZ"}
    for item in items:
        kind = type(item)
        if kind is Function or kind is VariableDecl:
            known.add(item.name)
        elif kind is Pragma and item.values and item.values[0] == ".alias":
            known.update(item.values[1:])
    for function, names in unresolved:
        missing = [name for name in names if name not in known]
        if missing:
            name = missing[0]
            pos = names[name]
            if pos is None:
                name, pos = _first_use(function, set(missing))
            what = "register" if name.startswith("%") else "identifier"
            raise LocatedError(f"undeclared {what} {name} in {function.name}", pos=pos,
                               search=name)


def _first_use(function: Function, names: set[str]):
    """The first of ``names`` an instruction of ``function`` uses, with its position."""
    for instr in function.instructions:
        found = []
        if instr.guard is not None:
            found.append(instr.guard.register)
        stack = list(instr.operands)
        while stack:
            item = stack.pop(0)
            kind = type(item)
            if kind in (Register, Symbol):
                found.append(item.name)
            elif kind is Address and item.base is not None:
                found.append(item.base.name)
            elif kind in (VectorOperand, ParenList, BracketList):
                stack[:0] = list(item.elements)
            elif kind is NegatedPredicate:
                found.append(item.register.name)
            elif kind is PredicatePair:
                stack[:0] = [item.first, item.second]
        for name in found:
            if name in names:
                pos = (instr.pos.line, instr.pos.column) if instr.pos else None
                return name, pos
    name = sorted(names)[0]
    pos = (function.pos.line, function.pos.column) if function.pos else None
    return name, pos
