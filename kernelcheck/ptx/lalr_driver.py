"""A lean LALR(1) driver over lark's tables: the contextual lexer and the shift/reduce loop.

lark analyses ``grammars/ptx.lark`` and builds the LALR tables and the rule callbacks (the
transformer methods, wrapped to drop punctuation and inline ``_rules``). This module runs
those tables with less work per token than lark's general driver, which is what PTX's size
asks for (a model's PTX is hundreds of thousands of lines):

* one compiled regular expression per parser state (the terminals that state accepts, in
  lark's priority order), which also skips the whitespace and comments before the token, so
  ignored text costs no extra iteration;
* no line counting while lexing: a token carries its offset, and line and column are
  computed from a table of newline offsets only when something asks for them;
* the action table flattened into tuples, looked up once per token.

The grammar stays the single source of truth: the driver has no knowledge of PTX.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from lark import Lark, Token
from lark.parsers.lalr_analysis import Shift

__all__ = ["LalrDriver", "DriverSyntaxError", "LazyToken"]

# Whitespace and comments before a token. The engine must never backtrack into a comment to
# find a token inside it (``a // , b`` must not yield the comma). Each piece can match only
# one way: a run of blanks is maximal (the lookahead after ``+``), a line comment runs to the
# end of its line, a block comment to its first ``*/``; and the whole skip is maximal (the
# final lookahead), so giving back any part of it fails at once, in linear time. No
# possessive quantifier or atomic group: CPython 3.11.0-3.11.4 mis-match some of those
# (gh-106052; Debian 12 ships 3.11.2), and tests/ptx/test_lalr_driver.py checks it.
_SKIP_PIECES = r"(?:[ \t\r\n]+(?![ \t\r\n])|//[^\n]*(?![^\n])|/\*(?:[^*]|\*(?!/))*\*/)*"
_SKIP = _SKIP_PIECES + r"(?![ \t\r\n]|//|/\*)"


class DriverSyntaxError(Exception):
    """Raised with the offset of the failure and the terminals that were acceptable there."""

    def __init__(self, offset: int, found: str | None, expected: tuple[str, ...]) -> None:
        self.offset = offset
        self.found = found
        self.expected = expected
        super().__init__(f"at offset {offset}: found {found!r}, expected {expected}")


class LazyToken(Token):
    """A lark :class:`~lark.Token` whose line and column are computed on first use."""

    __slots__ = ("_lines",)

    def __new__(cls, type_: str, value: str, offset: int, lines: _Lines) -> LazyToken:
        token = str.__new__(cls, value)
        token.type = type_
        token.value = value
        token.start_pos = offset
        token._lines = lines
        return token

    @property  # type: ignore[override]
    def line(self) -> int:
        return self._lines.line_of(self.start_pos)

    @property  # type: ignore[override]
    def column(self) -> int:
        return self._lines.column_of(self.start_pos)

    def position(self) -> tuple[int, int]:
        """``(line, column)`` with one lookup."""
        return self._lines.position(self.start_pos)


class _Lines:
    """Maps character offsets to 1-based (line, column), from the offsets of newlines."""

    __slots__ = ("_newlines",)

    def __init__(self, text: str) -> None:
        self._newlines = [m.start() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_left(self._newlines, offset) + 1

    def position(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_left(self._newlines, offset)
        return index + 1, offset - (self._newlines[index - 1] if index else -1)

    def column_of(self, offset: int) -> int:
        index = bisect.bisect_left(self._newlines, offset)
        start = self._newlines[index - 1] + 1 if index else 0
        return offset - start + 1


@dataclass(frozen=True, slots=True)
class _Reduce:
    size: int
    callback: Callable
    origin: str


class LalrDriver:
    """Runs a lark LALR parser's tables over text with a per-state lexer.

    Parameters
    ----------
    lark : Lark
        A parser built with ``parser="lalr"`` and the transformer whose callbacks build the
        result; only its tables, terminals and callbacks are used.
    raw_callbacks : dict, optional
        Rule alias or name -> callback taking the rule's children unfiltered (punctuation
        included as plain strings, ``*`` repetitions as whatever the repetition rule's own
        callback built). For the hottest rules, where lark's child filtering and its trees
        for repetitions are measurable.
    """

    def __init__(self, lark: Lark, raw_callbacks: dict[str, Callable] | None = None) -> None:
        frontend = lark.parser
        parser = frontend.parser.parser
        table = parser.parse_table
        callbacks = parser.callbacks
        self._start_state = table.start_states["start"]
        self._end_state = table.end_states["start"]
        self._actions: dict[int, dict[str, tuple[bool, object]]] = {}
        for state, actions in table.states.items():
            flat = {}
            # Keys and rule names as plain strings: lark names symbols with its Token
            # class, whose __eq__ is a Python call on every dictionary probe.
            for symbol, (action, arg) in actions.items():
                if action is Shift:
                    flat[str(symbol)] = (True, arg)
                else:
                    callback = callbacks[arg]
                    name = str(arg.alias or arg.origin.name)
                    if raw_callbacks and name in raw_callbacks:
                        callback = raw_callbacks[name]
                    elif raw_callbacks and arg.origin.name in raw_callbacks:
                        callback = raw_callbacks[arg.origin.name]
                    flat[str(symbol)] = (False, _Reduce(len(arg.expansion), callback,
                                                        str(arg.origin.name)))
            self._actions[state] = flat
        terminals = sorted(
            lark.terminals,
            key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name),
        )
        self._terminals = [(t.name, t.pattern.to_regexp()) for t in terminals]
        self._ignored = set(lark.ignore_tokens) if hasattr(lark, "ignore_tokens") else set(
            frontend.lexer_conf.ignore
        )
        # Terminals the rule callbacks drop (punctuation, `_NAMES`): pushed as plain strings.
        symbols = [s for rule in lark.rules for s in rule.expansion if s.is_term]
        kept = {s.name for s in symbols if not s.filter_out}
        self._filtered = {s.name for s in symbols if s.filter_out} - kept
        self._scanners: dict[int, re.Pattern] = {}
        self._by_accepts: dict[frozenset, re.Pattern] = {}

    def _scanner(self, state: int) -> re.Pattern:
        accepts = frozenset(s for s in self._actions[state] if s.isupper() and s != "$END")
        scanner = self._by_accepts.get(accepts)
        if scanner is None:
            groups = "|".join(
                f"(?P<{name}>{regexp})" for name, regexp in self._terminals if name in accepts
            )
            scanner = re.compile(f"{_SKIP}(?:{groups})" if groups else _SKIP + "(?!)")
            self._by_accepts[accepts] = scanner
        self._scanners[state] = scanner
        return scanner

    def parse(self, text: str):
        """Parse ``text`` and return the value the start rule's callback built."""
        lines = _Lines(text)
        actions = self._actions
        scanners = self._scanners
        states = [self._start_state]
        values: list = []
        pos = 0
        end = len(text)
        skip = re.compile(_SKIP_PIECES)  # stops before an unterminated comment
        end_state = self._end_state
        filtered = self._filtered
        while True:
            state = states[-1]
            scanner = scanners.get(state) or self._scanner(state)
            match = scanner.match(text, pos)
            if match is None:
                after = skip.match(text, pos).end()
                if after >= end:
                    token = None
                    kind = "$END"
                else:
                    raise DriverSyntaxError(after, text[after], self.expected(state))
            else:
                kind = match.lastgroup
                start = match.start(kind)
                pos = match.end()
                if kind in filtered:
                    token = match.group(kind)
                else:
                    token = LazyToken(kind, match.group(kind), start, lines)
            # Reduce as long as the table says so, then shift (or accept at the end).
            while True:
                action = actions[state].get(kind)
                if action is None:
                    if token is None:
                        offset = end
                    elif isinstance(token, LazyToken):
                        offset = token.start_pos
                    else:
                        offset = start
                    raise DriverSyntaxError(offset, token, self.expected(state))
                shift, arg = action
                if shift:
                    states.append(arg)
                    values.append(token)
                    break
                size = arg.size
                if size:
                    children = values[-size:]
                    del states[-size:]
                    del values[-size:]
                else:
                    children = []
                value = arg.callback(children)
                state = states[-1]
                goto = actions[state][arg.origin][1]
                if kind == "$END" and goto == end_state:
                    return value
                states.append(goto)
                values.append(value)
                state = goto

    def expected(self, state: int) -> tuple[str, ...]:
        """The terminal names acceptable in ``state``."""
        return tuple(sorted(s for s in self._actions[state] if s.isupper()))

    def line_column(self, text: str, offset: int) -> tuple[int, int]:
        """1-based line and column of ``offset`` in ``text``."""
        lines = _Lines(text)
        return lines.line_of(offset), lines.column_of(offset)
