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
  next token is read. The same is done for spellings of rules with nonterminals that the
  caller names (:class:`FusedStatement`: ``.reg .b32 %r<10>``, ``.param .u64 p``): the
  driver works out from the tables the reductions between and after their terminals. The
  stack, the values and every error are the same as when the run is lexed token by token
  (see :meth:`LalrDriver._fusion` for the conditions checked on the tables);
* before each alternative of a fused pattern, a test of the first character, so that a
  statement of another kind costs one comparison, not a partial lex.

The grammar stays the single source of truth: the driver has no knowledge of PTX.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

try:  # the regular-expression parser of the standard library (Python 3.11+)
    from re import _parser as _regex_parser
except ImportError:  # pragma: no cover - a Python without it only loses a shortcut
    _regex_parser = None

from lark import Lark, Token
from lark.parsers.lalr_analysis import Shift

__all__ = ["LalrDriver", "DriverSyntaxError", "FusedStatement", "LazyToken"]

# Whitespace and comments before a token. The engine must never backtrack into a comment to
# find a token inside it (``a // , b`` must not yield the comma). Each piece can match only
# one way: a run of blanks is maximal (the lookahead after ``+``), a line comment runs to the
# end of its line, a block comment to its first ``*/``; and the whole skip is maximal (the
# final lookahead), so giving back any part of it fails at once, in linear time. No
# possessive quantifier or atomic group: CPython 3.11.0-3.11.4 mis-match some of those
# (gh-106052; Debian 12 ships 3.11.2), and tests/ptx/test_lalr_driver.py checks it.
_SKIP_PIECES = r"(?:[ \t\r\n]+(?![ \t\r\n])|//[^\n]*(?![^\n])|/\*(?:[^*]|\*(?!/))*\*/)*"
_SKIP = _SKIP_PIECES + r"(?![ \t\r\n]|//|/\*)"
# Between the terminals of a fused run: blanks only. A comment there fails the run, which is
# then lexed token by token (nvcc writes none inside a statement).
_BLANKS = r"[ \t\r\n]*(?![ \t\r\n]|//|/\*)"
_CATEGORIES = {"CATEGORY_WORD": r"\w", "CATEGORY_DIGIT": r"\d", "CATEGORY_SPACE": r"\s"}


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
    # Terminals the state after the last one shifts, or reduces otherwise, instead of
    # reducing down to the rule: the pattern makes sure none of them comes next.
    excluded: frozenset[str]
    lexed_in: tuple[int, ...]  # the state each terminal is lexed in
    # How the next token is lexed, by the state the stack reached (see `_landing`).
    landings: dict[int, tuple[int | None, int | None]] = field(default_factory=dict)


@dataclass(frozen=True)
class FusedStatement:
    """A spelling of ``rule`` the table driver lexes whole though the rule has nonterminals
    (``.reg .b32 %r<10>``, ``.param .u64 p``): the terminals a derivation of the rule
    yields, each a terminal name or a quoted literal (``'"["'``), a trailing ``?`` making it
    optional. ``callback`` takes the text of each (``None`` where absent) and a function
    giving the 1-based (line, column) of the one at an index, and returns what the rule's
    reductions would build. The driver checks on its tables where the spelling can be
    taken whole, and that each terminal is the one the lexer would find first there."""

    rule: str
    terminals: tuple[str, ...]
    callback: Callable


@dataclass(frozen=True, slots=True)
class _FusedRule:
    """One fused rule in one state: its groups in the pattern and its expansions there."""

    names: tuple[str, ...]  # the groups of the terminals of the longest expansion
    runs: dict[tuple[bool, ...], _FusedRun]  # by which groups took part in the match
    callback: Callable  # takes the groups' texts (None where absent) and their positions
    whole: _FusedRun | None = None  # the only run, where no terminal is optional


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


def _first_class(regexp: str) -> str | None:
    """The body of a character class that holds the first character of every match of
    ``regexp``, or ``None`` where that is not worked out (a match may be empty, or the
    pattern uses something this does not read)."""
    try:
        parsed = _regex_parser.parse(regexp)
    except Exception:  # noqa: BLE001 - a pattern this cannot read gets no class
        return None
    if parsed.state.flags & re.IGNORECASE:
        return None
    pieces: set[str] = set()
    return "".join(sorted(pieces)) if _first_pieces(parsed, pieces) else None


def _first_pieces(sequence, pieces: set[str]) -> bool | None:
    """Add to ``pieces`` the class items a match of ``sequence`` can start with. True when
    every match starts with one of them, False when a match can be empty, None when the
    sequence uses something not handled here."""
    for op, argument in sequence:
        kind = str(op)
        if kind == "LITERAL":
            pieces.add(re.escape(chr(argument)))
            return True
        if kind == "IN":
            for item, value in argument:
                item = str(item)
                if item == "LITERAL":
                    pieces.add(re.escape(chr(value)))
                elif item == "RANGE":
                    pieces.add(f"{re.escape(chr(value[0]))}-{re.escape(chr(value[1]))}")
                elif item == "CATEGORY" and str(value) in _CATEGORIES:
                    pieces.add(_CATEGORIES[str(value)])
                else:
                    return None
            return True
        if kind in ("SUBPATTERN", "ATOMIC_GROUP"):
            inner = _first_pieces(argument[-1] if kind == "SUBPATTERN" else argument, pieces)
        elif kind == "BRANCH":
            results = [_first_pieces(branch, pieces) for branch in argument[1]]
            inner = None if None in results else all(results)
        elif kind in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            inner = _first_pieces(argument[2], pieces)
            if inner and argument[0] == 0:
                inner = False
        elif kind in ("AT", "ASSERT", "ASSERT_NOT"):
            # Zero width: leaving a lookaround out only widens the class.
            inner = False
        else:
            return None
        if inner is None or inner:
            return inner
    return False


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
                 fused_rules: dict[str, Callable] | None = None,
                 fused_statements: Sequence[FusedStatement] = ()) -> None:
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
        # Each fused entry: the rule, its expansions (each a subsequence of the longest), the
        # longest, the callback, and whether the pattern must check that each terminal is
        # the first the lexer would find there (statements spelled by the caller).
        self._fused_entries: list[tuple[str, list, tuple, Callable, bool]] = []
        for name, callback in (fused_rules or {}).items():
            expansions = [tuple(str(s.name) for s in rule.expansion) for rule in lark.rules
                          if str(rule.origin.name) == name
                          and all(s.is_term for s in rule.expansion)]
            if expansions:
                self._fused_entries.append(
                    (name, expansions, max(expansions, key=len), callback, False))
        literals = {t.pattern.value: t.name for t in lark.terminals
                    if type(t.pattern).__name__ == "PatternStr"}
        for statement in fused_statements:
            longest, optional = [], []
            for item in statement.terminals:
                bare = item[:-1] if item.endswith("?") else item
                name = literals.get(bare[1:-1], bare) if bare[:1] == '"' else bare
                if name not in self._regexps:
                    raise ValueError(f"{statement.rule}: no terminal {item!r}")
                longest.append(name)
                optional.append(bare != item)
            expansions = []
            for mask in itertools.product(*((True, False) if o else (True,)
                                            for o in optional)):
                expansions.append(tuple(t for t, kept in zip(longest, mask, strict=True) if kept))
            self._fused_entries.append(
                (statement.rule, expansions, tuple(longest), statement.callback, True))
        self._fusions: dict[int, _Fusion | None] = {}
        self._fused_first = {expansion[0] for _, expansions, _, _, _ in self._fused_entries
                             for expansion in expansions if expansion}
        self._order = {name: index for index, (name, _) in enumerate(self._terminals)}
        # States whose every action reduces by one rule: reduced without the next token.
        self._defaults: dict[int, _Reduce] = {}
        for state, actions in self._actions.items():
            reduces = {(a.size, a.callback, a.origin) for shift, a in actions.values()
                       if not shift}
            if len(reduces) == 1 and all(not shift for shift, _ in actions.values()):
                self._defaults[state] = next(a for _, a in actions.values())

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
        run = rule.whole
        if run is None:
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
        landing = run.landings.get(states[-1])
        if landing is None:
            landing = run.landings[states[-1]] = self._landing(run, states[-1])
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

        An expansion is fused in a state when, token by token, its terminals are shifted
        there in turn (with the reductions between them that the next terminal decides) and
        then, whatever the next token is, the same reductions follow until the rule itself
        is reduced back to ``state``, except for terminals that would be shifted first or
        reduced otherwise: the pattern then makes sure none of those comes next. Lexing the
        run at once and reducing before the next token is read builds the same stack. The
        next token is then lexed as the state after the last terminal would lex it (see
        :meth:`parse`).

        The expansions of a rule must be subsequences of its longest one (optional
        terminals, ``GUARD? OPCODE OPERANDS? ";"``): the rule's alternative is that
        expansion with the terminals some expansion lacks made optional. The alternatives
        of the rules are tried in the order the lexer tries their first terminals.
        """
        actions = self._actions[state]
        alternatives = []
        for rule, expansions, longest, callback, exact in self._fused_entries:
            goto = actions.get(rule)
            if goto is None or not goto[0]:
                continue
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
                # Terminals the lexer would try before each one, where the caller spelled
                # the statement: the pattern makes sure none of them matches there.
                before: list[set[str]] = [set() for _ in longest]
                if exact:
                    for present, run in runs.items():
                        indices = [i for i, kept in enumerate(present) if kept]
                        for index, lexed_in in zip(indices, run.lexed_in, strict=True):
                            before[index] |= self._tried_before(lexed_in, longest[index])
                pieces = []
                for index, terminal in enumerate(longest):
                    # Each terminal as the lexer takes it: its first match, never shortened
                    # to let the rest match (a lookahead is atomic; the backreference
                    # consumes).
                    group = f"{prefix}{index}"
                    guard = ""
                    if before[index]:
                        guard = "(?!" + "|".join(
                            f"(?:{self._regexps[t]})" for t in sorted(before[index])) + ")"
                    # The blanks before the first terminal are skipped once, before the
                    # alternatives (a skip is maximal: it never gives anything back).
                    skip = "" if index == 0 else _BLANKS
                    piece = (f"{skip}{guard}(?=(?P<{group}>{self._regexps[terminal]}))"
                             f"(?P={group})")
                    pieces.append(f"(?:{piece})?" if optional[index] else piece)
                if excluded:
                    pieces.append(f"(?!{_SKIP}(?:" + "|".join(
                        f"(?:{self._regexps[t]})" for t in sorted(excluded)) + "))")
                # A cheap test of the first character, so that a statement of another
                # kind fails this alternative at once, not after lexing part of it.
                firsts = []
                for index, terminal in enumerate(longest):
                    firsts.append(_first_class(self._regexps[terminal]))
                    if not optional[index]:
                        break
                if None not in firsts:
                    pieces.insert(0, "(?=[" + "".join(firsts) + "])")
                marker = f"{prefix}end"
                pieces.append(f"(?P<{marker}>)")
                names = tuple(f"{prefix}{index}" for index in range(len(longest)))
                alternatives.append((self._order.get(longest[0], len(self._order)),
                                     "".join(pieces), marker,
                                     _FusedRule(names, runs, callback,
                                                None if any(optional) else
                                                next(iter(runs.values())))))
        fusion = None
        if alternatives:
            alternatives.sort(key=lambda item: item[0])
            pattern = re.compile(_SKIP + "(?:" + "|".join(
                f"(?:{body})" for _, body, _, _ in alternatives) + ")")
            fusion = _Fusion(pattern, {marker: rule for _, _, marker, rule in alternatives})
        self._fusions[state] = fusion
        return fusion

    def _tried_before(self, state: int, terminal: str) -> set[str]:
        """The terminals ``state``'s lexer tries before ``terminal``."""
        accepts = self._actions[state]
        earlier = set()
        for name, _ in self._terminals:
            if name == terminal:
                return earlier
            if name in accepts:
                earlier.add(name)
        return earlier

    def _fused_run(self, state: int, rule: str, expansion: tuple[str, ...], goto: int,
                   first: str) -> _FusedRun | None:
        actions = self._actions
        stack = [state]
        lexed_in = []
        for terminal in expansion:
            lexed_in.append(stack[-1])
            while True:
                step = actions[stack[-1]].get(terminal)
                if step is None:
                    return None
                shift, arg = step
                if shift:
                    stack.append(arg)
                    break
                if arg.size >= len(stack):  # a reduction reaching below the run
                    return None
                del stack[len(stack) - arg.size:]
                stack.append(actions[stack[-1]][arg.origin][1])
        last = stack[-1]
        # What each terminal the last state accepts does next: the reductions down to the
        # rule, or (None) a shift or an error first. Gotos on nonterminals are in the same
        # table; only terminals decide what happens next.
        chains: dict[tuple | None, set[str]] = {}
        for symbol in actions[last]:
            if symbol in self._regexps or symbol == "$END":
                chain = self._chain(stack, symbol, rule)
                if chain is False:
                    return None
                chains.setdefault(chain, set()).add(symbol)
        reducing = [chain for chain in chains if chain is not None]
        if len(reducing) != 1 or "$END" in chains.get(None, ()):
            return None
        excluded = frozenset(chains.get(None, ()))
        return _FusedRun(goto, last, first, expansion[0], excluded, tuple(lexed_in))

    def _chain(self, stack: list[int], symbol: str, rule: str) -> tuple | None | bool:
        """The reductions ``symbol`` causes from ``stack`` until ``rule`` is reduced to the
        run's first state; ``None`` when it is shifted or fails first; ``False`` when it
        reduces anything else to that state, or below it."""
        actions = self._actions
        stack = list(stack)
        chain = []
        while True:
            step = actions[stack[-1]].get(symbol)
            if step is None or step[0]:
                return None
            reduce = step[1]
            if reduce.size >= len(stack):
                return False
            del stack[len(stack) - reduce.size:]
            chain.append(reduce)
            if len(stack) == 1:
                return tuple(chain) if reduce.origin == rule else False
            stack.append(actions[stack[-1]][reduce.origin][1])

    def expected(self, state: int) -> tuple[str, ...]:
        """The terminal names acceptable in ``state``."""
        return tuple(sorted(s for s in self._actions[state] if s.isupper()))

    def line_column(self, text: str, offset: int) -> tuple[int, int]:
        """1-based line and column of ``offset`` in ``text``."""
        lines = _Lines(text)
        return lines.line_of(offset), lines.column_of(offset)
