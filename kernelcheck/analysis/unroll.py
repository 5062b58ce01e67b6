"""Path facts proven by Z3 for loops unrolled after a remainder loop, and for nvcc's 32-bit
fast path of a 64-bit division.

**Unrolled loops.** A compiler unrolls ``for (i = i0; i < n; i += s)`` ``U`` times by first
running ``T mod U`` iterations in a remainder loop (``T`` the trip count) and then a main loop
whose body accesses ``x, x + s, ..., x + (U-1)*s`` and whose exit test is ``x + U*s < n``.
That the last ``U - 1`` accesses of each main iteration stay below ``n`` follows from the
number of iterations left being a multiple of ``U``; interval bounds see only ``x < n``.

For the main loop's tested variable ``x`` (``x_{k+1} = x_k + U*s``, continuing while
``x_{k+1} < n``), let ``Inv(x)`` be: ``x < n`` and ``N(x) = floor((n - x - 1) / s) + 1`` (the
iterations of step ``s`` from ``x`` before reaching ``n``) is a multiple of ``U``, with
``s > 0``. Then, in integers:

* ``Inv(x)`` implies ``x + (U-1)*s < n``: ``N(x) >= 1`` and a multiple of ``U``, so
  ``N(x) >= U``, that is ``(n - x - 1) / s >= U - 1``;
* ``Inv(x)`` and ``x + U*s < n`` imply ``Inv(x + U*s)``: ``N(x + U*s) = N(x) - U``.

So if ``Inv`` holds for the first value on every path into the loop, every iteration has
``x <= n - 1 - (U-1)*s``. :func:`prove_entry` proves ``Inv`` of each entry path's first
value from that path's guard literals (the remainder loop's exit test says how many
iterations it ran); the loop's own no-wrap conditions are those of its existing cap
(:mod:`kernelcheck.analysis.symbolic`: the evaluator checks that tested values do not wrap).

**Division fast path.** nvcc divides 64-bit values with ``div.u32`` when both fit in 32 bits
(``(a | b) & 0xffffffff00000000 == 0``) and ``div.u64`` otherwise; the merge of the two is
the 64-bit quotient when the 32-bit one equals it under its path's literals
(:func:`prove_equal_under`).

Encoding: terms as Z3 integers, like :mod:`kernelcheck.analysis.smt`, exact or a superset
of the true values (a fresh value constrained less than the machine's keeps ``unsat``
sound): ``Div``/``Rem``/``Shr`` exact for non-negative operands and a positive divisor,
else unconstrained; ``BitAnd`` with a mask ``2**k - 1`` exact (the low ``k`` bits, ``a mod
2**k``), with ``~(2**k - 1)`` of a 64-bit unsigned value exact, else ``0 <= v <= min``;
``BitOr`` of non-negative values between their maximum and their sum, and below
``2**32`` (``2**64``) where both are; ``Join`` one of its
candidates, each with the facts of its own sub-terms only; an ``Iter`` (the iteration count
of a loop) any integer in ``[0, 2**62)``: no thread runs ``2**62`` iterations of a loop
(a century at any clock rate). Guard literals that are not comparisons of encodable terms
are left out (fewer assumptions, still sound).
"""

from __future__ import annotations

from kernelcheck.analysis.budget import shielded
from kernelcheck.analysis.refute import counterexample
from kernelcheck.analysis.smt import _Encoder, check, load_z3
from kernelcheck.analysis.terms import (
    DIMS,
    Add,
    BitAnd,
    BitOr,
    Cmp,
    Const,
    Div,
    Iter,
    Join,
    Max,
    Min,
    Mul,
    PAnd,
    Param,
    PConst,
    PNot,
    POr,
    Rem,
    Shr,
    Special,
    Term,
    TripMax,
    Wrap,
    add,
    mul,
)

__all__ = ["prove_count", "prove_entry", "prove_equal_under", "solver_proves_equal_under"]

#: Z3's deterministic resource limit per query (a wall-clock timeout would make the
#: answer depend on the machine's load): about 5 s of one core; the proofs of the
#: fixtures take under 3 million.
RLIMIT = 8_000_000
#: The limit of :func:`prove_entry`: its proofs take under 3.5 million in the fixtures and
#: under 2.5 million in a sample of libtorch's kernels, while the claims Z3 cannot decide
#: there (the bound ``n - n % (4*ntid)`` of a 4x-unrolled block-stride loop) use all of
#: the limit they are given: about a second each at 8 million.
ENTRY_RLIMIT = 5_000_000
#: Wall-clock cap per query, a guard only: Z3's non-linear arithmetic does not always stop
#: at its resource limit (a query of libtorch's 3-D average pooling ran 35 s at a limit
#: of 1.5 million units).
TIMEOUT_MS = 10_000
_ITER_LIMIT = 1 << 62


class _PathEncoder(_Encoder):
    """One thread's terms and predicates (every variable shared: one execution path)."""

    def __init__(self, z3, facts: list) -> None:
        super().__init__(z3, {}, "t", facts)
        self.fresh = 0

    def _new(self, tag: str):
        # Names unique in the whole query: Z3 takes two constants of one name as one.
        self.fresh += 1
        return self.z3.Int(f"{tag}#{self.fresh}")

    def enc(self, t):
        if t in self.memo:
            return self.memo[t]
        out = self._enc(t)
        self.memo[t] = out
        return out

    def _enc(self, t):
        z3 = self.z3
        kind = type(t)
        if kind in (Wrap, Shr):
            fits = _fits(t)
            if fits is not None:
                return self.enc(fits)
        if kind is Wrap:
            inner = self.enc(_unwrapped(t.arg, t.bits))
            lo = -(1 << (t.bits - 1)) if t.signed else 0
            v, q = self._new("wrap"), self._new("q")
            self.facts.append(z3.And(v >= lo, v < lo + (1 << t.bits),
                                     v == inner - (1 << t.bits) * q))
            return v
        if kind is BitAnd and type(t.b) is not Const:
            a, b = self.enc(t.a), self.enc(t.b)
            v = self._new("and")
            self.facts.append(z3.Implies(z3.And(a >= 0, b >= 0),
                                         z3.And(v >= 0, v <= a, v <= b)))
            return v
        if kind is Iter:
            return self.var(f"iter{t.header}", 62, True, 0, _ITER_LIMIT - 1)
        if kind in (Div, Rem):
            a, b = self.enc(t.a), self.enc(t.b)
            v = self._new("div" if kind is Div else "rem")
            exact = a / b if kind is Div else a % b
            self.facts.append(z3.Implies(z3.And(a >= 0, b > 0), v == exact))
            return v
        if kind is Shr:
            return self.enc(t.a) / (1 << t.k)  # floor division by a power of two: exact
        if kind is BitAnd and type(t.b) is Const:
            m = t.b.value
            # The low k bits of a value are those of anything congruent modulo 2**k.
            a = self.enc(_unwrapped(t.a, m.bit_length()) if m >= 0 and m & (m + 1) == 0
                         else t.a)
            v = self._new("and")
            if m >= 0 and m & (m + 1) == 0:
                self.facts.append(v == a % (m + 1))
                return v
            low = ~m & ((1 << 64) - 1)
            if m >= 0 and m >> 64 == 0 and low & (low + 1) == 0:
                self.facts.append(z3.Implies(z3.And(a >= 0, a < (1 << 64)),
                                             v == a - a % (low + 1)))
                self.facts.append(z3.Implies(z3.And(a >= 0, m >= 0),
                                             z3.And(v >= 0, v <= a)))
                return v
            self.facts.append(z3.Implies(a >= 0, z3.And(v >= 0, v <= a, v <= m)))
            return v
        if kind is BitOr:
            a, b = self.enc(t.a), self.enc(t.b)
            v = self._new("or")
            self.facts.append(z3.Implies(z3.And(a >= 0, b >= 0),
                                         z3.And(v >= a, v >= b, v <= a + b)))
            for k in (32, 64):  # no bit at or above 2**k in either: none in a | b
                self.facts.append(z3.Implies(z3.And(a >= 0, b >= 0, a < 1 << k, b < 1 << k),
                                             v < 1 << k))
            return v
        if kind in (Min, Max):
            a, b = self.enc(t.a), self.enc(t.b)
            return z3.If(a <= b, a, b) if kind is Min else z3.If(a <= b, b, a)
        if kind is Join:
            v = self._new("join")
            options = []
            for arg in t.args:
                saved_facts, saved_memo = self.facts, self.memo
                self.facts, self.memo = [], dict(saved_memo)
                try:
                    value = self.enc(arg)
                    options.append(z3.And(v == value, *self.facts))
                finally:
                    self.facts, self.memo = saved_facts, saved_memo
            self.facts.append(z3.Or(*options))
            return v
        return super()._enc(t)  # leaves, sums, products, Bound, NotEq: no fresh names

    def pred(self, p):
        """The Z3 formula of ``p``, or ``None`` where it is not encodable."""
        z3 = self.z3
        kind = type(p)
        if kind is Cmp:
            try:
                a, b = self.enc(p.a), self.enc(p.b)
            except (ValueError, TypeError, z3.Z3Exception):
                return None
            return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b, "eq": a == b,
                    "ne": a != b}.get(p.op)
        if kind is PConst:
            return z3.BoolVal(p.value)
        if kind is PNot:
            inner = self.pred(p.p)
            return None if inner is None else z3.Not(inner)
        if kind in (PAnd, POr):
            a, b = self.pred(p.a), self.pred(p.b)
            if a is None or b is None:
                return None
            return z3.And(a, b) if kind is PAnd else z3.Or(a, b)
        return None


def _range(t, memo: dict) -> tuple[int, int] | None:
    """Bounds ``(lo, hi)`` of every value of ``t`` from the ranges of its leaves (those
    the encoder gives them), or ``None``."""
    key = id(t)
    if key in memo:
        return memo[key][1]
    kind = type(t)
    out = None
    if kind is Const:
        out = (t.value, t.value)
    elif kind is Param:
        out = (0, (1 << 8 * t.size) - 1)
    elif kind is Special and t.name in DIMS:
        out = (1, 1024 if t.name.startswith("%ntid") else (1 << 31) - 1)
    elif kind is Special and t.name[:-2] in ("%tid", "%ctaid"):
        out = (0, 1023 if t.name.startswith("%tid") else (1 << 31) - 2)
    elif kind is Iter:
        out = (0, _ITER_LIMIT - 1)
    elif kind is Wrap:
        low = -(1 << (t.bits - 1)) if t.signed else 0
        inner = _range(t.arg, memo)
        out = inner if inner is not None and low <= inner[0] and (
            inner[1] < low + (1 << t.bits)) else (low, low + (1 << t.bits) - 1)
    elif kind is BitAnd and type(t.b) is Const and t.b.value >= 0:
        out = (0, t.b.value)  # two's complement: a & m has no bit m lacks
    elif kind is Shr:
        inner = _range(t.a, memo)
        out = None if inner is None else (inner[0] >> t.k, inner[1] >> t.k)
    elif kind in (Add, Mul):
        parts = [_range(a, memo) for a in t.args]
        if None not in parts:
            out = parts[0]
            for lo, hi in parts[1:]:
                if kind is Add:
                    out = (out[0] + lo, out[1] + hi)
                else:
                    corners = [x * y for x in out for y in (lo, hi)]
                    out = (min(corners), max(corners))
    memo[key] = (t, out)
    return out


def _unwrapped(t: Term, bits: int) -> Term:
    """``t`` with the wraps to ``bits`` or more bits inside its sums and products left
    out: congruent to ``t`` modulo ``2**bits``, so ``Wrap(t, bits)`` is the same value.
    (The SASS lift wraps each 32-bit half and each 64-bit pair it joins.)"""
    kind = type(t)
    if kind is Wrap and t.bits >= bits:
        return _unwrapped(t.arg, bits)
    if kind is Add:
        return add(*(_unwrapped(a, bits) for a in t.args))
    if kind is Mul:
        return mul(*(_unwrapped(a, bits) for a in t.args))
    return t


def _fits(t) -> Term | None:
    """For ``Wrap(x)`` whose ``x`` always lies in the wrap's range: ``x``; for ``x >> k``
    with ``0 <= x < 2**k``: ``0``; else ``None``. Both are exact, and spare the solver the
    quotient of a wrap it would otherwise have to find (the SASS lift computes 64-bit values
    in 32-bit halves, each wrapped)."""
    memo: dict = {}
    if type(t) is Wrap:
        low = -(1 << (t.bits - 1)) if t.signed else 0
        inner = _range(t.arg, memo)
        if inner is not None and low <= inner[0] and inner[1] < low + (1 << t.bits):
            return t.arg
        return None
    inner = _range(t.a, memo)
    if inner is not None and 0 <= inner[0] and inner[1] < 1 << t.k:
        return Const(0)
    return None


def _solver(z3, facts, rlimit: int = RLIMIT):
    solver = z3.Solver()
    solver.set("rlimit", rlimit)
    solver.add(*facts)
    return solver


def prove_equal_under(literals, a: Term, b: Term) -> bool:
    """Whether ``a == b`` (as integers) on every execution where ``literals`` hold.

    >>> from kernelcheck.analysis.terms import Param, Wrap
    >>> x, y = Param("x", 0, 8), Param("y", 8, 8)
    >>> fits = Cmp("lt", x, Const(1 << 32))
    >>> prove_equal_under([fits], Wrap(x, 32, False), x)
    True
    >>> prove_equal_under([], Wrap(x, 32, False), x)
    False

    Values that show the two differ are tried first (:func:`kernelcheck.analysis.refute.
    counterexample`): most of these questions are answered "no", which the tries find in
    microseconds where Z3 may take a second.
    """
    if counterexample(literals, lambda value: value(a) == value(b)) is not None:
        return False
    return solver_proves_equal_under(literals, a, b)


@shielded()
def solver_proves_equal_under(literals, a: Term, b: Term) -> bool:
    """:func:`prove_equal_under` by Z3 alone."""
    z3 = load_z3()

    facts: list = []
    encoder = _PathEncoder(z3, facts)
    try:
        ea, eb = encoder.enc(a), encoder.enc(b)
    except (ValueError, TypeError, z3.Z3Exception):
        return False
    for literal in literals:
        f = encoder.pred(literal)
        if f is not None:
            facts.append(f)
    solver = _solver(z3, facts)
    solver.add(ea != eb)
    return check(solver, TIMEOUT_MS) == z3.unsat


@shielded()
def prove_entry(paths, bound: Term, stride: Term, unroll: int) -> bool:
    """Whether ``Inv`` (module notes) holds for the first value of every entry path.

    ``paths`` holds ``(literals, first value)`` per path into the loop; ``bound`` is the
    ``n`` of the exit test ``x < n``, ``stride`` the ``s`` of the step ``U*s``, ``unroll``
    the ``U``.

    >>> from kernelcheck.analysis.terms import Param, Special, add, mul
    >>> n, s, i = Param("n", 0, 4), Param("s", 4, 4), Special("%tid.x")
    >>> # i + s < n <= i + 2*s: two iterations of step s left
    >>> lits = [Cmp("gt", s, Const(0)), Cmp("lt", add(i, mul(Const(1), s)), n),
    ...         Cmp("ge", add(i, mul(Const(2), s)), n)]
    >>> prove_entry([(lits, i)], n, s, 2), prove_entry([(lits, i)], n, s, 4)
    (True, False)
    >>> # A path no execution takes constrains nothing.
    >>> never = [Cmp("lt", n, Const(3)), Cmp("gt", n, Const(5))]
    >>> prove_entry([(lits, i), (never, add(i, Const(1)))], n, s, 2)
    True
    """
    z3 = load_z3()

    for literals, first in paths:
        facts: list = []
        encoder = _PathEncoder(z3, facts)
        try:
            x, n, s = encoder.enc(first), encoder.enc(bound), encoder.enc(stride)
        except (ValueError, TypeError, z3.Z3Exception):
            return False
        for literal in literals:
            f = encoder.pred(literal)
            if f is not None:
                facts.append(f)
        solver = _solver(z3, facts, ENTRY_RLIMIT)
        found = check(solver, TIMEOUT_MS)
        if found == z3.unsat:
            continue  # no execution takes this path
        left = (n - x - 1) / s + 1
        claim = z3.And(s > 0, x < n, left % unroll == 0)
        # The execution Z3 found on the path usually breaks the claim already (the usual
        # answer is "no"): that is the answer of the second query, without its search.
        if found == z3.sat and z3.is_false(solver.model().eval(claim, model_completion=True)):
            return False
        solver.add(z3.Not(claim))
        if check(solver, TIMEOUT_MS) != z3.unsat:
            return False
    return True


def _last_iteration(z3, encoder, trip: TripMax):
    """``(kmax, valid)``: the last iteration a thread runs of a loop counted by ``trip``
    (its own values, one path), and the condition under which the evaluator models it
    (:func:`kernelcheck.launch.evaluate._tripmax`); ``None`` for other counts."""
    if type(trip.step) is not Const or not trip.step.value:
        return None
    x0, b, s = encoder.enc(trip.x0), encoder.enc(trip.bound), trip.step.value
    if trip.mode == "ne":
        # Iteration k tests x0 + k*s; the first equal to b ends the loop.
        return (b - x0) / s, z3.And((b - x0) % abs(s) == 0, (b - x0) * s >= 0)
    if trip.mode == "lt" and s > 0:
        # Iteration k runs when every earlier tested value was below b.
        return z3.If(x0 < b, (b - 1 - x0) / s + 1, 0), z3.BoolVal(True)
    if trip.mode == "gt" and s < 0:
        return z3.If(x0 > b, (x0 - b - 1) / -s + 1, 0), z3.BoolVal(True)
    return None


@shielded()
def prove_count(literals, trip: TripMax, first: Term, bound: Term, step: Term) -> bool:
    """Whether every iteration ``k`` a loop counted by ``trip`` runs keeps ``first +
    k*step < bound``, on every execution where ``literals`` (the loop's entry edge) hold.

    It proves ``step > 0``, ``first < bound`` and ``kmax <= (bound - first - 1) / step``
    for the thread's own last iteration ``kmax`` (``trip`` counts the same thread's loop),
    wherever the evaluator models the count.

    >>> from kernelcheck.analysis.terms import BitAnd, Param, Special, add, mul
    >>> n, i, s = Param("n", 0, 4), Special("%tid.x"), Special("%ntid.x")
    >>> total = add(Div(add(n, mul(Const(-1), i), Const(-1)), s), Const(1))
    >>> rest = BitAnd(total, Const(3))  # T mod 4 of the T iterations left
    >>> trip = TripMax(add(rest, Const(-1)), Const(-1), Const(0), 32, True, "ne")
    >>> prove_count([Cmp("lt", i, n)], trip, i, n, s)
    True
    >>> prove_count([Cmp("lt", i, n)], trip, i, add(n, Const(-1)), s)
    False
    """
    z3 = load_z3()

    facts: list = []
    encoder = _PathEncoder(z3, facts)
    try:
        x, n, s = encoder.enc(first), encoder.enc(bound), encoder.enc(step)
        last = _last_iteration(z3, encoder, trip)
    except (ValueError, TypeError, z3.Z3Exception):
        return False
    if last is None:
        return False
    kmax, valid = last
    for literal in literals:
        f = encoder.pred(literal)
        if f is not None:
            facts.append(f)
    solver = _solver(z3, facts)
    solver.add(valid)
    solver.add(z3.Not(z3.And(s > 0, x < n, kmax <= (n - x - 1) / s)))
    return check(solver, TIMEOUT_MS) == z3.unsat
