"""Read SASS text as nvdisasm's plain listing prints it (``nvdisasm -c``) into the IR.

Accepted lines: a function header ``.text.<name>:``, labels ``.L_x_12:``, instructions
with an optional offset comment and a trailing ``;`` (``/*0040*/  @P0 BRA `(.L_x_1) ;``),
``//`` comments, and assembler directives (``.section``, ``.type``, ...), which are skipped.
Text without any function header is read as one function named ``sass``. Without offset
comments, instructions are given offsets 0, 16, 32, ...

Errors name the line and column in the text given, so a hand-written snippet can be fixed
where it is wrong.
"""

from __future__ import annotations

import re

from kernelcheck.ir.nodes import Function, Module
from kernelcheck.sass.function import build_function

__all__ = ["parse_sass"]

_HEADER = re.compile(r"^\s*\.text\.(\S+):\s*$")
_LABEL = re.compile(r"^\s*([\w$.]+):\s*$")
_OFFSET = re.compile(r"/\*([0-9a-fA-F]{4,})\*/")


class _Pending:
    def __init__(self, name: str) -> None:
        self.name = name
        self.rows: list[tuple[int, str]] = []
        self.lines: list[int] = []
        self.labels: dict[int, list[str]] = {}
        self.waiting: list[str] = []

    def next_offset(self) -> int:
        return self.rows[-1][0] + 16 if self.rows else 0


def _instruction_text(line: str) -> tuple[int | None, str, int]:
    """(offset or None, instruction text, 0-based column where the text starts)."""
    offset = None
    match = _OFFSET.search(line)
    start = 0
    if match:
        offset = int(match.group(1), 16)
        start = match.end()
    body = line[start:]
    comment = body.find("//")
    if comment >= 0:
        body = body[:comment]
    semicolon = body.find(";")
    if semicolon >= 0:
        body = body[:semicolon]
    stripped = body.strip()
    column = start + (body.find(stripped) if stripped else 0)
    return offset, stripped, column


def parse_sass(text: str, filename: str | None = None) -> Module:
    """Parse a SASS listing into a module of ``func`` functions (kinds are not known here).

    Parameters
    ----------
    text : str
        The listing.
    filename : str, optional
        Named in errors.

    Raises
    ------
    SassSyntaxError
        With the line and column in ``text`` and the tokens that were expected.

    Examples
    --------
    >>> m = parse_sass('''
    ... .text.k:
    ...         /*0000*/  ISETP.GE.AND P0, PT, R0, 0x10, PT ;
    ...         /*0010*/  @P0 BRA `(.L_x_1) ;
    ...         /*0020*/  STG.E desc[UR4][R2.64], R0 ;
    ... .L_x_1:
    ...         /*0030*/  EXIT ;
    ... ''')
    >>> [b.name for b in m.functions[0].blocks]
    ['$bb0', '$bb1', '.L_x_1']
    """
    functions: list[_Pending] = []
    current: _Pending | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            name = header.group(1)
            # nvdisasm prints the function's own symbol just before its header.
            if current is not None and current.waiting[-1:] == [name]:
                current.waiting.pop()
            current = _Pending(name)
            functions.append(current)
            continue
        label = _LABEL.match(line)
        if label:
            if current is None:
                continue  # a symbol before the first function header
            current.waiting.append(label.group(1))
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith(("//", ".", "#")) and "/*" not in stripped:
            continue
        offset, instruction, column = _instruction_text(line)
        if not instruction:
            continue
        if current is None:
            current = _Pending("sass")
            functions.append(current)
        if offset is None:
            offset = current.next_offset()
        if current.waiting:
            current.labels.setdefault(offset, []).extend(current.waiting)
            current.waiting.clear()
        # Pad so that error columns count from the start of the line.
        current.rows.append((offset, " " * column + instruction))
        current.lines.append(number)
    result: list[Function] = []
    for pending in functions:
        if pending.waiting:
            pending.labels.setdefault(pending.next_offset(), []).extend(pending.waiting)
        result.append(build_function(
            pending.name, pending.rows, kind="func",
            labels={k: tuple(v) for k, v in pending.labels.items()},
            filename=filename, lines=pending.lines,
        ))
    return Module(version=None, target=(), address_size=64, items=tuple(result),
                  filename=filename)
