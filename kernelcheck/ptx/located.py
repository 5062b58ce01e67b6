"""Front-end errors tied to a source position, and operands that wait for their scopes.

The transformer builds IR during the parse, before it knows what the names of a function
are; an operand whose meaning depends on them (:class:`PendingExpression`,
:class:`PendingArrayElement`) is completed by :mod:`kernelcheck.ptx.scopes`. Errors found
on the way are :class:`LocatedError`, which :mod:`kernelcheck.ptx.parser` turns into
``PtxSyntaxError`` or ``UnsupportedFeature`` naming the file, line and column.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelcheck.ptx import constexpr

__all__ = ["LocatedError", "PendingExpression", "PendingArrayElement", "position_of"]


class LocatedError(Exception):
    """An error of the input at a source position.

    ``offset`` is a character offset in the text, or ``pos`` a ``(line, column)``; with
    ``search``, the column is refined to where that identifier stands on the statement.
    ``unsupported`` marks a valid construct kernelcheck does not model.
    """

    def __init__(self, message: str, *, offset: int | None = None,
                 pos: tuple[int, int] | None = None, search: str | None = None,
                 unsupported: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.pos = pos
        self.search = search
        self.unsupported = unsupported


@dataclass(frozen=True, slots=True)
class PendingExpression:
    """An operand expression with names, resolved with the scopes of its function."""

    node: constexpr.Node
    text: str
    offset: int


@dataclass(frozen=True, slots=True)
class PendingArrayElement:
    """``name[index]`` (ISA §6.4.2), resolved once the element type of ``name`` is known."""

    name: str
    index: object
    offset: int


def position_of(item) -> tuple[int, int] | None:
    """``(line, column)`` of an IR value with a ``pos``, or ``None``."""
    pos = getattr(item, "pos", None)
    return (pos.line, pos.column) if pos is not None else None
