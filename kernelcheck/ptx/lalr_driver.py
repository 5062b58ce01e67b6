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
* the action table flattened into tuples, looked up once per token;
* *fused rules*: for rules named by the caller whose expansions are runs of terminals (PTX's
  instruction statement ``@%p bra $L;``, a label, a ``.loc``), one regular expression lexes
  the whole run, the rule's callback is called at once, and the reductions that follow it
  without looking at the next token (the statement list growing by one) are done before the
  next token is read. The stack, the values and every error are the same as when the run is
  lexed token by token (see :meth:`LalrDriver._fusion` for the conditions checked on the
  tables).

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


class _RunPositions:
    """Where the parts of the fused run being reduced stand: ``position(i)`` is the
    1-based (line, column) of part ``i``."""

    __slots__ = ("_lines", "match", "names")

    def __init__(self, lines: _Lines) -> None:
        self._lines = lines
        self.match: re.Match | None = None
        self.names: tuple[str, ...] = ()

    def position(self, part: int) -> tuple[int, int]:
        return self._lines.position(self.match.start(self.names[part]))


@dataclass(frozen=True, slots=True)
class _Reduce:
    size: int
    callback: Callable
    origin: str


@dataclass(frozen=True, slots=True, eq=False)  # hashed by identity: a key per parsed run
class _FusedRun:
    """One expansion of a fused rule, as the tables run it from one state."""

    goto: int  # the state after the rule's nonterminal is shifted
    last: int  # the state after its last terminal: the one that would see the next token
    first: str  # the group of its first terminal
    first_terminal: str
    # Terminals the state after the last one shifts instead of reducing: the pattern makes
    # sure none of them comes next.
    excluded: frozenset[str]


@dataclass(frozen=True, slots=True)
class _FusedRule:
    """One fused rule in one state: its groups in the pattern and its expansions there."""

    names: tuple[str, ...]  # the groups of the terminals of the longest expansion
    runs: dict[tuple[bool, ...], _FusedRun]  # by which groups took part in the match
    callback: Callable  # takes the groups' texts (None where absent) and their positions


@dataclass(frozen=True, slots=True)
class _Fusion:
    """A state's fused rules: one pattern, an alternative per rule."""

    pattern: re.Pattern
    rules: dict[str, _FusedRule]  # by the name of the empty group that ends its alternative


def _subsequence(short: tuple[str, ...], long: tuple[str, ...]) -> tuple[bool, ...] | None:
    """Which items of ``long`` make up ``short`` (taken in order), or ``None``."""
    present = []
    index = 0
    for item in long:
        taken = index < len(short) and short[index] == item
        present.append(taken)
        index += taken
    return tuple(present) if index == len(short) else None


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
    fused_rules : dict, optional
        Rule name -> callback, for rules whose terminal-only expansions are lexed with one
        pattern where the tables allow it. The expansions must be subsequences of the
        longest one; the callback takes the text of each terminal of that expansion
        (``None`` where the statement lacks it) and a function giving the 1-based (line,
        column) of the terminal at an index, and returns what the rule's callback would.
        Each terminal must be lexed the same way whatever else the state accepts (the
        highest-priority terminal that can match there, as PTX's ``GUARD``, ``OPCODE`` and
        ``OPERANDS`` are); tests/ptx/test_fused_statements.py checks it.
    """

    def __init__(self, lark: Lark, raw_callbacks: dict[str, Callable] | None = None,
                 fused_rules: dict[str, Callable] | None = None) -> None:
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
        self._regexps = dict(self._terminals)
        self._fused_expansions = {
            name: [tuple(str(s.name) for s in rule.expansion) for rule in lark.rules
                   if str(rule.origin.name) == name
                   and all(s.is_term for s in rule.expansion)]
            for name in fused_rules or ()
        }
        self._fused_callbacks = dict(fused_rules or {})
        self._fusions: dict[int, _Fusion | None] = {}
        self._fused_first = {expansion[0] for expansions in self._fused_expansions.values()
                             for expansion in expansions if expansion}
        self._order = {name: index for index, (name, _) in enumerate(self._terminals)}
        # States whose every action reduces by one rule: reduced without the next token.
        self._defaults: dict[int, _Reduce] = {}
        for state, actions in self._actions.items():
            reduces = {(a.size, a.callback, a.origin) for shift, a in actions.values()
                       if not shift}
            if len(reduces) == 1 and all(not shift for shift, _ in actions.values()):
                self._defaults[state] = next(a for _, a in actions.values())
        self._landings: dict[tuple[int, _FusedRun], tuple[int | None, int | None]] = {}

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
        where = _RunPositions(lines)
        actions = self._actions
        scanners = self._scanners
        fusions = self._fusions
        fused_first = self._fused_first
        states = [self._start_state]
        values: list = []
        pos = 0
        end = len(text)
        skip = re.compile(_SKIP_PIECES)  # stops before an unterminated comment
        end_state = self._end_state
        filtered = self._filtered
        # After a fused run, token by token would have lexed the next token in the state
        # after the run's last terminal, not in the state on top of the stack now. Where the
        # two lex differently, `lex_state` is that state; where they differ only in the
        # terminals the run's pattern ruled out, `report_state` is it, for the expected
        # tokens of an error at the next token.
        lex_state = None
        report_state = None
        while True:
            state = states[-1]
            if lex_state is None:
                fusion = fusions.get(state, False)
                if fusion is False:
                    fusion = self._fusion(state)
                if fusion is not None:
                    fused = self._run_fused(fusion, text, pos, None, states, values, where)
                    if fused is not None:
                        pos, lex_state, report_state = fused
                        continue
            else:
                state = lex_state
            scanner = scanners.get(state) or self._scanner(state)
            match = scanner.match(text, pos)
            if match is None:
                after = skip.match(text, pos).end()
                if after >= end:
                    token = None
                    kind = "$END"
                else:
                    expected = self.expected(state if report_state is None else report_state)
                    raise DriverSyntaxError(after, text[after], expected)
            else:
                kind = match.lastgroup
                start = match.start(kind)
                pos = match.end()
                if kind in filtered:
                    token = match.group(kind)
                else:
                    token = LazyToken(kind, match.group(kind), start, lines)
            if lex_state is not None:
                # Token by token, that state would have reduced on any token it accepts (to
                # where the stack is now) and failed on any other.
                lex_state = None
                if kind not in actions[state]:
                    offset = end if token is None else start
                    raise DriverSyntaxError(offset, token, self.expected(state))
                state = states[-1]
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
                    expected = self.expected(state if report_state is None else report_state)
                    raise DriverSyntaxError(offset, token, expected)
                report_state = None
                shift, arg = action
                if shift:
                    if kind in fused_first:
                        # The token starts a statement a fused rule may take whole.
                        fusion = fusions.get(state, False)
                        if fusion is False:
                            fusion = self._fusion(state)
                        if fusion is not None:
                            fused = self._run_fused(fusion, text, start, (kind, pos), states,
                                                    values, where)
                            if fused is not None:
                                pos, lex_state, report_state = fused
                                break
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

    def _run_fused(self, fusion: _Fusion, text: str, at: int, first: tuple[str, int] | None,
                   states: list, values: list,
                   where: _RunPositions) -> tuple[int, int | None, int | None] | None:
        """Lex, reduce and push one fused run at ``at``; ``None`` when none matches there.

        ``first`` is the kind and end of the token already lexed at ``at``, if any: the run
        must begin with that same token. Returns the offset after the run, the state to lex the
        next token with (``None``: the one on top of the stack) and the state whose expected
        tokens an error at the next token names (``None``: the one it happens in).
        """
        match = fusion.pattern.match(text, at)
        if match is None:
            return None
        rule = fusion.rules[match.lastgroup]
        names = rule.names
        taken = match.group(*names) if len(names) > 1 else (match.group(names[0]),)
        run = rule.runs.get(tuple(map(bool, taken)))  # a terminal never matches ""
        if run is None:
            return None
        if first is not None and (run.first_terminal != first[0]
                                  or match.end(run.first) != first[1]):
            return None
        actions = self._actions
        defaults = self._defaults
        where.match = match
        where.names = rule.names
        values.append(rule.callback(taken, where.position))
        states.append(run.goto)
        # The reductions that need no lookahead (a statement list growing by one).
        reduce = defaults.get(run.goto)
        while reduce is not None:
            size = reduce.size
            children = values[-size:]
            del states[-size:]
            del values[-size:]
            value = reduce.callback(children)
            goto = actions[states[-1]][reduce.origin][1]
            states.append(goto)
            values.append(value)
            reduce = defaults.get(goto)
        key = (states[-1], run)
        landing = self._landings.get(key)
        if landing is None:
            landing = self._landings[key] = self._landing(run, states[-1])
        return match.end(), landing[0], landing[1]

    def _landing(self, run: _FusedRun, landed: int) -> tuple[int | None, int | None]:
        """How the token after ``run`` is lexed when the stack has reached ``landed``."""
        after = set(self.expected(run.last))
        here = set(self.expected(landed))
        if after == here:
            return None, None
        if after - run.excluded == here:
            # The scanners differ only in terminals the pattern made sure are not next.
            return None, run.last
        return run.last, None

    def _fusion(self, state: int) -> _Fusion | None:
        """The fused rules that can start in ``state``, as one pattern, or ``None``.

        An expansion is fused in a state when, token by token, each of its terminals is
        shifted there in turn (no reduction in between) and the state after the last one
        reduces by that expansion whatever the next token is, except for terminals it
        shifts: the pattern then makes sure none of those comes next. Lexing the run at
        once and reducing before the next token is read builds the same stack. The next
        token is then lexed as the state after the last terminal would lex it (see
        :meth:`parse`).

        The expansions of a rule must be subsequences of its longest one (optional
        terminals, ``GUARD? OPCODE OPERANDS? ";"``): the rule's alternative is that
        expansion with the terminals some expansion lacks made optional. The alternatives
        of the rules are tried in the order the lexer tries their first terminals.
        """
        actions = self._actions[state]
        alternatives = []
        for rule, expansions in self._fused_expansions.items():
            goto = actions.get(rule)
            if goto is None or not goto[0] or not expansions:
                continue
            longest = max(expansions, key=len)
            prefix = f"r{len(alternatives)}_"
            runs: dict[tuple[bool, ...], _FusedRun] = {}
            for expansion in expansions:
                present = _subsequence(expansion, longest)
                if present is None:
                    break
                run = self._fused_run(state, rule, expansion, goto[1],
                                      f"{prefix}{present.index(True)}")
                if run is not None:
                    runs[present] = run
            else:
                if not runs:
                    continue
                optional = [not all(key[i] for key in runs) for i in range(len(longest))]
                excluded = set().union(*(run.excluded for run in runs.values()))
                pieces = []
                for index, terminal in enumerate(longest):
                    # Each terminal as the lexer takes it: its first match, never shortened
                    # to let the rest match (a lookahead is atomic; the backreference
                    # consumes).
                    group = f"{prefix}{index}"
                    piece = f"{_SKIP}(?=(?P<{group}>{self._regexps[terminal]}))(?P={group})"
                    pieces.append(f"(?:{piece})?" if optional[index] else piece)
                if excluded:
                    pieces.append(f"(?!{_SKIP}(?:" + "|".join(
                        f"(?:{self._regexps[t]})" for t in sorted(excluded)) + "))")
                marker = f"{prefix}end"
                pieces.append(f"(?P<{marker}>)")
                names = tuple(f"{prefix}{index}" for index in range(len(longest)))
                alternatives.append((self._order.get(longest[0], len(self._order)),
                                     "".join(pieces), marker,
                                     _FusedRule(names, runs, self._fused_callbacks[rule])))
        fusion = None
        if alternatives:
            alternatives.sort(key=lambda item: item[0])
            pattern = re.compile("|".join(f"(?:{body})" for _, body, _, _ in alternatives))
            fusion = _Fusion(pattern, {marker: rule for _, _, marker, rule in alternatives})
        self._fusions[state] = fusion
        return fusion

    def _fused_run(self, state: int, rule: str, expansion: tuple[str, ...], goto: int,
                   first: str) -> _FusedRun | None:
        current = state
        for terminal in expansion:
            step = self._actions[current].get(terminal)
            if step is None or not step[0]:
                return None
            current = step[1]
        last = self._actions[current]
        reduces = {(a.size, a.callback, a.origin) for shift, a in last.values() if not shift}
        if len(reduces) != 1:
            return None
        reduce = next(a for shift, a in last.values() if not shift)
        if reduce.origin != rule or reduce.size != len(expansion):
            return None
        # (Gotos on nonterminals are there too; only terminals decide what happens next.)
        excluded = frozenset(symbol for symbol, (shift, _) in last.items()
                             if shift and symbol in self._regexps)
        return _FusedRun(goto, current, first, expansion[0], excluded)

    def expected(self, state: int) -> tuple[str, ...]:
        """The terminal names acceptable in ``state``."""
        return tuple(sorted(s for s in self._actions[state] if s.isupper()))

    def line_column(self, text: str, offset: int) -> tuple[int, int]:
        """1-based line and column of ``offset`` in ``text``."""
        lines = _Lines(text)
        return lines.line_of(offset), lines.column_of(offset)
