"""Counterexamples found by trying values: a quick "no" to the questions
:mod:`kernelcheck.analysis.unroll` asks Z3.

Most of those questions (is the 32-bit quotient on one path the 64-bit one of the other?)
have the answer "no", and Z3 may take a second to find the values that show it. A handful
of tries often finds them first: values of the parameters and launch coordinates, drawn
by a seeded generator, under which every path literal holds and the claim does not.

Such values are a model of Z3's own encoding of the question (:class:`_PathEncoder
<kernelcheck.analysis.unroll._PathEncoder>`): a parameter is a free value of its width
named by its offset and size, a launch dimension lies in the range the encoder gives it
(``%ntid`` in 1..1024, ``%nctaid`` in 1..2**31-1), a thread coordinate below its
dimension, ``%laneid`` in 0..31, and every operation is computed exactly. The encoder
describes each operation by the same value or by a set that holds it, so Z3 could not
have answered "proved" where a try finds a counterexample: the answer is the one Z3
gives, only sooner. A try that meets a term it cannot compute exactly (a division by a
value that is not positive, a bit operation of a negative value, an opaque value, a loop
count) is dropped, and the question goes to Z3.

>>> from kernelcheck.analysis.terms import Cmp, Const, Param, Wrap
>>> x = Param("x", 0, 8)
>>> counterexample([Cmp("lt", x, Const(1 << 40))], lambda value: value(Wrap(x, 32, False))
...                == value(x)) is not None
True
>>> counterexample([Cmp("lt", x, Const(1 << 32))], lambda value: value(Wrap(x, 32, False))
...                == value(x)) is None
True
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from kernelcheck.analysis.terms import (
    DIMS,
    Add,
    BitAnd,
    BitOr,
    Bound,
    Cmp,
    Const,
    Div,
    Iter,
    Max,
    Min,
    Mul,
    NotEq,
    Opaque,
    PAnd,
    Param,
    PConst,
    PNot,
    POpaque,
    POr,
    Rem,
    Shr,
    Special,
    Wrap,
)

__all__ = ["TRIES", "counterexample"]

#: How many sets of values are tried per question.
TRIES = 48
#: Values a parameter is drawn from (clipped to its width), beside random ones: the
#: boundaries where 32-bit and 64-bit arithmetic part ways, and small sizes.
_EDGES = (0, 1, 2, 3, 4, 5, 7, 8, 16, 31, 32, 33, 64, 100, 255, 256, 1000, 1023, 1024,
          4096, 65535, 65536, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32,
          (1 << 32) + 1, 1 << 40, (1 << 63) - 1, 1 << 63, (1 << 64) - 1)
_BLOCK_SIZES = (1, 2, 32, 64, 128, 256, 512, 1024)
_GRID_SIZES = (1, 2, 3, 7, 100, 65535, (1 << 31) - 1)


class _NoValue(Exception):
    """A term this try cannot compute exactly: the try is dropped."""


class _Values:
    """One try: a value per parameter (by offset and size), opaque value (by tag), loop
    count (by loop) and launch coordinate, drawn when first asked for; ``opaque`` holds
    the values the literals pin (:func:`_pinned`)."""

    def __init__(self, rng: random.Random, opaque: dict[str, int]) -> None:
        self.rng = rng
        self.params: dict[tuple[int, int], int] = {}
        self.opaque: dict[str, int] = dict(opaque)
        self.specials: dict[str, int] = {}
        self.iterations: dict[int, int] = {}

    def _draw_word(self, bits: int) -> int:
        top = (1 << bits) - 1
        pick = self.rng.random()
        if pick < 0.2:
            value = 0  # what a fast path's test of the high words asks for
        elif pick < 0.6:
            value = self.rng.choice(_EDGES)
        elif pick < 0.85:
            value = self.rng.randrange(0, 1 << self.rng.choice((4, 8, 12, 16, 24)))
        else:
            value = self.rng.randrange(0, top + 1)
        return min(value, top)

    def param(self, t: Param) -> int:
        key = (t.offset, t.size)
        if key not in self.params:
            self.params[key] = self._draw_word(8 * t.size)
        return self.params[key]

    def opaque_value(self, t: Opaque) -> int:
        """A value the analysis does not model: the encoder's free unsigned value of its
        width, one per tag (the range of the first it meets)."""
        bits = min(t.bits, 64)
        if t.tag not in self.opaque:
            self.opaque[t.tag] = self._draw_word(bits)
        value = self.opaque[t.tag]
        if value >> bits:
            raise _NoValue(t.tag)  # a narrower one of the same tag: the range is not known
        return value

    def iteration(self, t: Iter) -> int:
        """A loop's iteration count: the encoder's free value in ``[0, 2**62)``, one per
        loop."""
        if t.header not in self.iterations:
            self.iterations[t.header] = self.rng.choice((0, 1, 2, 3, self.rng.randrange(64)))
        return self.iterations[t.header]

    def special(self, name: str) -> int:
        if name not in self.specials:
            self.specials[name] = self._draw(name)
        return self.specials[name]

    def _draw(self, name: str) -> int:
        if name in DIMS:
            return self.rng.choice(_BLOCK_SIZES if name.startswith("%ntid") else _GRID_SIZES)
        if name == "%laneid":
            return self.rng.randrange(32)
        if name.startswith(("%tid.", "%ctaid.")):
            limit = self.special(name.replace("%tid", "%ntid").replace("%ctaid", "%nctaid"))
            # The edges of the range are where arithmetic of coordinates overflows.
            return self.rng.choice((0, limit - 1, self.rng.randrange(limit)))
        raise _NoValue(name)


def _operands(t) -> tuple:
    kind = type(t)
    if kind in (Const, Param, Special, Opaque, Iter, PConst):
        return ()
    if kind is Bound:
        return tuple(x for x in (t.arg, t.lo, t.hi) if x is not None)
    if kind is NotEq:
        return (t.arg, t.value)
    if kind in (Add, Mul):
        return t.args
    if kind is Wrap:
        return (t.arg,)
    if kind is Shr:
        return (t.a,)
    if kind is PNot:
        return (t.p,)
    if kind in (Div, Rem, BitAnd, BitOr, Min, Max, Cmp, PAnd, POr):
        return (t.a, t.b)
    raise _NoValue(kind.__name__)


_COMPARE = {"lt": int.__lt__, "le": int.__le__, "gt": int.__gt__, "ge": int.__ge__,
            "eq": int.__eq__, "ne": int.__ne__}


def _apply(t, args: list, values: _Values):
    kind = type(t)
    if kind is Const:
        return t.value
    if kind is Param:
        return values.param(t)
    if kind is Special:
        return values.special(t.name)
    if kind is Opaque:
        return values.opaque_value(t)
    if kind is Iter:
        return values.iteration(t)
    if kind is Bound:
        # The encoder's facts lo <= v <= hi: a draw outside them is not one of its models.
        v, rest = args[0], args[1:]
        lo = rest.pop(0) if t.lo is not None else None
        hi = rest.pop(0) if t.hi is not None else None
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise _NoValue("bound")
        return v
    if kind is NotEq:
        if args[0] == args[1]:
            raise _NoValue("excluded value")
        return args[0]
    if kind is Add:
        return sum(args)
    if kind is Mul:
        out = 1
        for a in args:
            out *= a
        return out
    if kind is Wrap:
        v = args[0] & ((1 << t.bits) - 1)
        return v - (1 << t.bits) if t.signed and v >> (t.bits - 1) else v
    if kind is Shr:
        return args[0] >> t.k  # floor(a / 2**k), negative values included
    if kind is PConst:
        return t.value
    if kind is PNot:
        return not args[0]
    a, b = args
    if kind is Cmp:
        return _COMPARE[t.op](a, b)
    if kind is PAnd:
        return a and b
    if kind is POr:
        return a or b
    if kind is Min:
        return min(a, b)
    if kind is Max:
        return max(a, b)
    if kind in (Div, Rem):
        if a >= 0 and b > 0:
            return a // b if kind is Div else a % b
        # The encoder leaves the quotient of these free: any value is one of its models;
        # the hardware's (truncated toward zero) is the natural one.
        if b == 0:
            return 0
        quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return quotient if kind is Div else a - b * quotient
    if a < 0 or b < 0:
        raise _NoValue(kind.__name__)
    return a & b if kind is BitAnd else a | b


def _evaluate(term, values: _Values, memo: dict):
    """The value of ``term`` (a term or predicate) under ``values``; ``memo`` keeps the
    value of each node by id for the one try (the caller keeps the terms alive)."""
    stack = [term]
    while stack:
        t = stack[-1]
        if id(t) in memo:
            stack.pop()
            continue
        kids = _operands(t)
        missing = [k for k in kids if id(k) not in memo]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        memo[id(t)] = _apply(t, [memo[id(k)] for k in kids], values)
    return memo[id(term)]


def _dropped(literal) -> bool:
    """Whether the encoder leaves ``literal`` out of the facts: a logical combination
    with an opaque predicate in it has no formula (``_PathEncoder.pred``)."""
    stack = [literal]
    while stack:
        p = stack.pop()
        kind = type(p)
        if kind is POpaque:
            return True
        if kind is PNot:
            stack.append(p.p)
        elif kind in (PAnd, POr):
            stack.extend((p.a, p.b))
    return False


def _pinned(literals) -> dict[str, int]:
    """The values literals ``v == c`` give opaque values ``v`` (``c`` a constant): nvcc's
    fast paths test that the high words of their operands are 0 (a ``PRMT`` or ``LOP3`` the
    analysis leaves opaque), which a free draw rarely meets."""
    pinned: dict[str, int] = {}
    for literal in literals:
        if type(literal) is Cmp and literal.op == "eq":
            for a, b in ((literal.a, literal.b), (literal.b, literal.a)):
                while type(a) is Wrap:
                    a = a.arg  # the value modulo the wrap's width: the one to try
                if type(a) is Opaque and type(b) is Const:
                    pinned.setdefault(a.tag, b.value & ((1 << min(a.bits, 64)) - 1))
    return pinned


def counterexample(literals: Sequence, claim: Callable[[Callable], bool],
                   tries: int = TRIES, seed: int = 0) -> dict | None:
    """Values under which every one of ``literals`` holds and ``claim`` does not, found
    among ``tries`` seeded draws; ``None`` when no draw shows one (which proves nothing).

    ``claim(value)`` says whether the claim holds, given ``value``, the function that
    computes a term under the draw. The result maps each parameter ``(offset, size)``,
    opaque value's tag and launch coordinate name to its value.
    """
    literals = [literal for literal in literals if not _dropped(literal)]
    pinned = _pinned(literals)
    rng = random.Random(seed)
    for _ in range(tries):
        values = _Values(rng, pinned)
        memo: dict = {}

        def value(term, values=values, memo=memo):
            return _evaluate(term, values, memo)

        try:
            if all(value(literal) for literal in literals) and not claim(value):
                return {**values.params, **values.opaque, **values.specials}
        except _NoValue:
            continue
    return None
