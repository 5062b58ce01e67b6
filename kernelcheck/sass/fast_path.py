"""The fast path of the SASS instruction parser: split the text, look each operand up.

A library's SASS repeats operands far more than whole instructions: in a CUTLASS image
about a fifth of the instruction texts are distinct, but the distinct operand texts
(``R2``, ``c[0x0][0x160]``, ``desc[UR4][R2.64+0x10]``) number only a few thousand. So an
instruction is split at its top-level commas into guard, opcode and operand texts, and each
operand is looked up in a memo; only an operand never seen before is parsed, and it is
parsed by the grammar itself (``grammars/sass.lark``) as the only operand of a ``NOP``.
The grammar therefore stays the single reference: the fast path holds no knowledge of what
an operand means, only where one ends.

Whenever the split is not plain (an empty operand, a malformed guard or opcode, an operand
that does not parse alone as exactly one operand), :meth:`FastPath.parse` returns ``None``
and the caller parses the whole text with the grammar, which then gives the same result or
the :class:`~kernelcheck.errors.SassSyntaxError` with its column, exactly as without the
fast path.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kernelcheck.ir.nodes import Guard, Operand

__all__ = ["FastPath", "split_operands"]

_GUARD = re.compile(r"@(!?)([A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z0-9_$]+)*)$")
_OPCODE = re.compile(r"[A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*$")
_MEMO_LIMIT = 100_000


def split_operands(text: str) -> list[str] | None:
    """Split an operand list at its top-level commas, or ``None`` if a piece is empty.

    Commas inside ``{...}`` (``DEPBAR {5,4,3}``) do not split.

    Examples
    --------
    >>> split_operands("R2, c[0x0][0x160], {1,0}")
    ['R2', 'c[0x0][0x160]', '{1,0}']
    >>> split_operands("R2,,R3") is None
    True
    """
    if "{" in text:
        pieces, depth, start = [], 0, 0
        for position, char in enumerate(text):
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
            elif char == "," and depth == 0:
                pieces.append(text[start:position].strip())
                start = position + 1
        pieces.append(text[start:].strip())
    else:
        pieces = [piece.strip() for piece in text.split(",")]
    if not all(pieces):
        return None
    return pieces


class FastPath:
    """Instruction parts from memoized guards, opcodes and operands.

    Parameters
    ----------
    parse_operands : callable
        Parses an instruction text with the grammar and returns its operands; called as
        ``parse_operands("NOP " + operand_text)`` for an operand not seen before. It
        raises (any exception) when the text does not parse.
    make_parts : callable
        Builds the result from ``(guard, opcode, modifiers, operands)``.
    """

    def __init__(self, parse_operands: Callable[[str], tuple[Operand, ...]],
                 make_parts: Callable) -> None:
        self._parse_operands = parse_operands
        self._make_parts = make_parts
        self._operands: dict[str, Operand | None] = {}
        self._opcodes: dict[str, tuple[str, tuple[str, ...]] | None] = {}
        self._guards: dict[str, Guard | None] = {}

    def operand(self, text: str) -> Operand | None:
        """The operand ``text`` stands for alone, or ``None`` if it is not one operand."""
        memo = self._operands
        if text in memo:
            return memo[text]
        try:
            parsed = self._parse_operands("NOP " + text)
        except Exception:  # noqa: BLE001 - the caller reparses the whole text and reports
            parsed = ()
        found = parsed[0] if len(parsed) == 1 else None
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        memo[text] = found
        return found

    def _opcode(self, text: str) -> tuple[str, tuple[str, ...]] | None:
        found = self._opcodes.get(text, False)
        if found is False:
            if _OPCODE.match(text):
                opcode, *modifiers = text.split(".")
                found = (opcode, tuple(modifiers))
            else:
                found = None
            if len(self._opcodes) >= _MEMO_LIMIT:
                self._opcodes.clear()
            self._opcodes[text] = found
        return found

    def _guard(self, text: str) -> Guard | None:
        found = self._guards.get(text, False)
        if found is False:
            match = _GUARD.match(text)
            found = Guard(match.group(2), bool(match.group(1))) if match else None
            if len(self._guards) >= _MEMO_LIMIT:
                self._guards.clear()
            self._guards[text] = found
        return found

    def parse(self, text: str):
        """The parts of ``text``, or ``None`` when the grammar must parse it whole."""
        words = text.split(None, 1)
        if not words:
            return None
        guard = None
        if words[0][0] == "@":
            guard = self._guard(words[0])
            if guard is None or len(words) == 1:
                return None
            words = words[1].split(None, 1)
        opcode = self._opcode(words[0])
        if opcode is None:
            return None
        if len(words) == 1:
            return self._make_parts(guard, opcode[0], opcode[1], ())
        pieces = split_operands(words[1])
        if pieces is None:
            return None
        memo = self._operands
        operands = []
        for piece in pieces:
            operand = memo.get(piece)
            if operand is None:
                operand = self.operand(piece)
                if operand is None:
                    return None
            operands.append(operand)
        return self._make_parts(guard, opcode[0], opcode[1], tuple(operands))
