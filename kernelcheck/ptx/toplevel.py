"""The quick check of a function whose declarations are all at its top level.

Most functions (compiler output without calls and without inline assembly) declare every
name at the top of the body and write every register with its declared name. For them,
:func:`quick_check` decides from the sets of names the parser saw, with set operations only,
that nothing needs renaming or rewriting, and the walk of :mod:`kernelcheck.ptx.scopes`
is skipped.
"""

from __future__ import annotations

from kernelcheck.ir.nodes import Param, RegisterDecl
from kernelcheck.ptx.located import LocatedError, position_of

__all__ = ["quick_check", "range_names"]


_RANGE_NAMES: dict[tuple[str, int], frozenset[str]] = {}


def range_names(prefix: str, count: int) -> frozenset[str]:
    """The names ``%r<N>`` declares, kept across functions (nvcc repeats the same ranges)."""
    names = _RANGE_NAMES.get((prefix, count))
    if names is None:
        if len(_RANGE_NAMES) > 4096:
            _RANGE_NAMES.clear()
        names = frozenset(f"{prefix}{k}" for k in range(count))
        _RANGE_NAMES[(prefix, count)] = names
    return names


def quick_check(decls: list, params: tuple[Param, ...], used_registers: set[str],
                 used_symbols: set[str]) -> set[str] | None:
    """The check of a function whose declarations are all at its top level.

    Returns the names left for the module (``used_symbols`` that the function does not
    declare), or ``None`` when the scope walk must run: a register name used that is not a
    declared register (a ``%`` parameter, a vector element, an undeclared register) or a
    bare name that is one, or a vector register. Duplicate declarations are errors.
    Set operations only: this runs for every function of every module.
    """
    registers: set[str] = set()
    others: set[str] = set()
    ranges: list[frozenset[str]] = []
    count = 0
    for param in params:
        if param.space == "reg":
            if param.vector:
                return None
            registers.add(param.name)
        else:
            others.add(param.name)
        count += 1
    prefixes: set[str] = set()
    for decl in decls:
        kind = type(decl)
        if kind is RegisterDecl:
            if decl.vector:
                return None
            if decl.count is None:
                registers.update(decl.names)
                count += len(decl.names)
            else:
                prefix = decl.names[0]
                if prefix in prefixes:
                    _duplicate(decls, params)
                if prefix[-1:].isdigit():
                    # `%r<20>` and `%r1<5>` both declare `%r10`: left to the scope walk.
                    return None
                prefixes.add(prefix)
                ranges.append(range_names(prefix, decl.count))
        else:
            others.add(decl.name)
            count += 1
    if len(registers) + len(others) != count or registers & others:
        _duplicate(decls, params)
    if ranges:
        # Ranges of distinct prefixes that end in no digit never share a name.
        explicit = registers | others
        for names in ranges:
            if explicit & names:
                _duplicate(decls, params)
    rest = used_registers - registers
    for names in ranges:
        if not rest:
            break
        rest = rest - names
    if rest:
        return None
    if used_symbols & registers or any(used_symbols & names for names in ranges):
        return None
    return used_symbols - others


def _duplicate(decls: list, params: tuple[Param, ...]) -> None:
    """Raise the error for the first name declared twice at the top level."""
    seen: set[str] = set()
    items = [(p.name, p) for p in params]
    for decl in decls:
        if type(decl) is RegisterDecl:
            items.extend((name, decl) for name in decl.iter_base_names())
        else:
            items.append((decl.name, decl))
    for name, where in items:
        if name in seen:
            raise LocatedError(f"duplicate declaration of {name}", pos=position_of(where),
                               search=name)
        seen.add(name)
