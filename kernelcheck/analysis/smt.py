"""Z3 proofs of summary facts, over integer encodings of address terms.

:func:`prove_never_overlap` asks Z3 whether a write and a read of a kernel can share a byte
for *any* instance and any two threads. Unsatisfiable means they never can, so the pair
needs no launch-time test (and a kernel whose pairs all go is ``always`` idempotent).
:func:`prove_same_address` asks whether a read and a later write of one thread always hit
the same bytes (the ``never`` class beyond syntactic equality).

Encoding (exact for the terms it accepts; anything else is "not encoded" and not asked):

* Terms denote integers and are encoded as Z3 integers (linear arithmetic where the terms
  are affine, non-linear where a product of two variables occurs). Earlier versions
  bit-blasted 256-bit vectors; integers give the same answers (both are exact) at a
  fraction of the cost: on the fixtures every query now answers within its budget.
* ``Wrap(t, w, s)`` is a fresh ``v`` in the ``w``-bit signed or unsigned range with
  ``v = t - 2**w * q`` for a fresh integer ``q``: the unique value congruent to ``t``. Exact.
* ``BitAnd`` is a fresh value with ``0 <= v <= min(a, b)`` when both operands are
  non-negative, unconstrained otherwise: a superset of the true values, which keeps an
  ``unsat`` answer sound.
* Parameters are shared by both threads (one instance); thread indices and values the
  analysis does not model (``Opaque``) are separate per thread; launch dimensions are shared,
  with ``1 <= %ntid <= 1024`` and ``1 <= %nctaid < 2**31`` (CUDA limits).
* ``Bound`` and ``NotEq`` nodes are path-guard facts: they hold on every execution of the
  access, so they become constraints of that thread.
* Loop counters, joins, divisions and shifts are not encoded: the query is then not asked.

Cost control: a query whose two addresses differ by a constant inside the overlap window
for the *same* thread is answered "sat" without Z3 (that thread is a witness whenever it
runs); identical queries of one kernel are answered once (``cache``); each query runs under
Z3's deterministic resource budget (``rlimit``, :data:`RLIMIT` units: about a tenth of a
second of one core on the hardest fixture queries), so the answer is the same on a loaded
machine as on a quiet one, and under a wall-clock cap (``timeout_ms``, 2 s) only as a
guard against a solver that stalls. ``unknown`` is "not proven" and the pair stays in the
LaunchCheck. z3 is imported on first use only.

Why the interval bounds need no separate monotonicity proof: the LaunchCheck evaluates each
address by interval arithmetic over the affine form, and interval addition and
multiplication are inclusion-monotone (the result contains every value the operation takes
on members of its operand intervals), whatever the sign or monotonicity of the term in each
variable. The only place where the machine's arithmetic differs from the integers is a
wrap, and every wrap is an explicit ``WRAP`` record that the evaluator checks per instance
(identity when the range fits, split or invalid otherwise). So no monotonicity fact is
assumed, and there is nothing for Z3 to prove there.
"""

from __future__ import annotations

import time

from kernelcheck.analysis.budget import shielded
from kernelcheck.analysis.terms import (
    DIMS,
    Add,
    BitAnd,
    Bound,
    Const,
    Mul,
    NotEq,
    Opaque,
    Param,
    Special,
    Wrap,
)

__all__ = ["SmtResult", "load_z3", "prove_never_overlap", "prove_same_address", "canonical",
           "check", "TIMEOUT_MS", "RLIMIT"]

#: Z3 resource units one query may use. A wall-clock budget made verdicts depend on the
#: machine's load: a Triton kernel's disjointness proof takes 20,000 units and 40-50 ms,
#: at the edge of the 50 ms it once had. The hardest fixture queries use about 110,000.
RLIMIT = 200_000
#: Wall-clock cap per query, a guard only (the resource budget ends a query first).
TIMEOUT_MS = 2000
_LIMIT = 250  # bits an encoded value may need
#: Where :func:`prove_never_overlap` keeps, in its cache, what it reuses between the queries
#: of one kernel, and how many of the executions it found it tries before a search.
_KERNEL_MEMO = ("overlap memo",)
_WITNESSES_KEPT = 4


class SmtResult:
    """``proved`` (bool), ``status`` (``unsat``/``sat``/``unknown``/``not encoded``), and
    ``seconds`` spent in Z3."""

    __slots__ = ("proved", "status", "seconds")

    def __init__(self, proved: bool, status: str, seconds: float) -> None:
        self.proved, self.status, self.seconds = proved, status, seconds

    def __repr__(self) -> str:
        return f"SmtResult({self.proved}, {self.status!r}, {self.seconds:.4f})"


def _width(t) -> int | None:
    """An upper bound on the bits of ``|t|`` (plus sign), or ``None`` if not encodable."""
    kind = type(t)
    if kind is Const:
        return abs(t.value).bit_length() + 1
    if kind is Param:
        return 8 * t.size + 1
    if kind is Special:
        return 33
    if kind is Opaque:
        return min(t.bits, 64) + 1
    if kind is Wrap:
        return None if _width(t.arg) is None else t.bits + 1
    if kind is Add:
        parts = [_width(a) for a in t.args]
        return None if None in parts else max(parts) + len(parts).bit_length()
    if kind is Mul:
        parts = [_width(a) for a in t.args]
        return None if None in parts else sum(parts)
    if kind is BitAnd:
        parts = [_width(t.a), _width(t.b)]
        return None if None in parts else max(parts)
    if kind is Bound:
        parts = [_width(x) for x in (t.arg, t.lo, t.hi) if x is not None]
        return None if None in parts else max(parts)
    if kind is NotEq:
        parts = [_width(t.arg), _width(t.value)]
        return None if None in parts else max(parts)
    return None


_Z3_READY = False


def load_z3():
    """The ``z3`` module, with its Ctrl-C handler turned off (once per process).

    Z3 takes a SIGINT that arrives during a check as a request to cancel that check: the
    check answers "unknown" and the program never sees the interrupt, so a Ctrl-C pressed
    while a proof ran was lost and the command went on. With the handler off, the interrupt
    waits for the check to end (each runs under a resource limit) and then stops the
    program as Ctrl-C does anywhere else.
    """
    global _Z3_READY
    import z3

    if not _Z3_READY:
        z3.set_param("ctrl_c", False)
        _Z3_READY = True
    return z3


def check(solver, timeout_ms: int):
    """``solver.check()`` under a wall-clock limit of ``timeout_ms``, or of the time left of
    the kernel's analysis budget (:func:`kernelcheck.analysis.budget.seconds_left`) where
    that is shorter: the budget cannot stop a query while it runs, and a query that goes
    on past it only delays the "not proven" the budget gives. A query stopped by either
    limit answers ``unknown`` (not proven)."""
    from kernelcheck.analysis.budget import seconds_left

    left = seconds_left()
    if left is not None:
        timeout_ms = min(timeout_ms, max(1, int(left * 1000)))
    solver.set("timeout", int(timeout_ms))
    return solver.check()


class _Encoder:
    def __init__(self, z3, shared: dict, side: str, facts: list) -> None:
        self.z3, self.shared, self.side, self.facts = z3, shared, side, facts
        self.memo: dict = {}

    def var(self, name: str, bits: int, shared: bool, lo: int = 0, hi: int | None = None):
        z3 = self.z3
        table = self.shared if shared else self.memo
        key = ("var", name)
        if key in table:
            return table[key]
        v = z3.Int(f"{name}@{'all' if shared else self.side}")
        table[key] = v
        hi = (1 << bits) - 1 if hi is None else hi
        self.facts.append(z3.And(v >= lo, v <= hi))  # signed 256-bit: integer order
        return v

    def enc(self, t):
        key = id(t)
        if key in self.memo:
            return self.memo[key]
        out = self._enc(t)
        self.memo[key] = out
        return out

    def _enc(self, t):
        z3 = self.z3
        kind = type(t)
        if kind is Const:
            return z3.IntVal(t.value)
        if kind is Param:
            return self.var(f"param{t.offset}:{t.size}", 8 * t.size, True)
        if kind is Special:
            if t.name in DIMS:
                limit = 1024 if t.name.startswith("%ntid") else (1 << 31) - 1
                return self.var(t.name, 32, True, 1, limit)
            if t.name == "%laneid":
                return self.var(t.name, 5, False)
            dim = self.var(t.name.replace("%tid", "%ntid").replace("%ctaid", "%nctaid"), 32,
                           True, 1, 1024 if t.name.startswith("%tid") else (1 << 31) - 1)
            v = self.var(t.name, 32, False)
            self.facts.append(v < dim)
            return v
        if kind is Opaque:
            return self.var(f"opaque:{t.tag}", min(t.bits, 64), False)
        if kind is Wrap:
            inner = self.enc(t.arg)
            lo = -(1 << (t.bits - 1)) if t.signed else 0
            v = z3.Int(f"wrap{len(self.facts)}@{self.side}")
            q = z3.Int(f"q{len(self.facts)}@{self.side}")
            self.facts.append(z3.And(v >= lo, v < lo + (1 << t.bits),
                                     v == inner - (1 << t.bits) * q))
            return v
        if kind is Add:
            out = self.enc(t.args[0])
            for a in t.args[1:]:
                out = out + self.enc(a)
            return out
        if kind is Mul:
            out = self.enc(t.args[0])
            for a in t.args[1:]:
                out = out * self.enc(a)
            return out
        if kind is BitAnd:
            # Over integers: for non-negative operands 0 <= a & b <= min(a, b); otherwise
            # any value. A superset of the true values keeps an unsat answer sound.
            a, b = self.enc(t.a), self.enc(t.b)
            v = z3.Int(f"and{len(self.facts)}@{self.side}")
            self.facts.append(z3.Implies(z3.And(a >= 0, b >= 0),
                                         z3.And(v >= 0, v <= a, v <= b)))
            return v
        if kind is Bound:
            v = self.enc(t.arg)
            if t.lo is not None:
                self.facts.append(v >= self.enc(t.lo))
            if t.hi is not None:
                self.facts.append(v <= self.enc(t.hi))
            return v
        if kind is NotEq:
            v = self.enc(t.arg)
            self.facts.append(v != self.enc(t.value))
            return v
        raise ValueError(f"not encodable: {kind.__name__}")


def prove_never_overlap(write_addr, write_width: int, read_addr, read_width: int,
                        timeout_ms: int = TIMEOUT_MS, cache: dict | None = None) -> SmtResult:
    """Prove that the bytes of a write and of a read never meet, for any instance.

    Parameters
    ----------
    write_addr, read_addr : Term
        Byte addresses with their path-guard facts applied
        (:func:`kernelcheck.analysis.lower.apply_guards`).
    write_width, read_width : int
        Bytes per access.
    timeout_ms : int
        Wall-clock cap for the query (the deterministic budget is :data:`RLIMIT`).
    cache : dict, optional
        Answers of earlier queries (of one kernel), keyed by the query; filled in. It also
        keeps the encoding of each address, and the last few executions Z3 found where a
        pair may overlap: a query that one of them satisfies is answered "sat" without a
        search (the answer the search would give; see :func:`_never_overlap`).

    Returns
    -------
    SmtResult
        ``proved`` only when Z3 answers ``unsat``.

    Examples
    --------
    >>> from kernelcheck.analysis.terms import Param, Special, add, mul, wrap
    >>> p, t = Param("a", 0, 8), Special("%tid.x")
    >>> even, odd = wrap(add(p, mul(Const(8), t)), 64, False), wrap(
    ...     add(p, mul(Const(8), t), Const(4)), 64, False)
    >>> prove_never_overlap(odd, 4, even, 4).proved
    True
    >>> prove_never_overlap(even, 8, even, 4).status
    'sat (same thread)'
    """
    key = ("overlap", write_addr, write_width, read_addr, read_width)
    if cache is not None and key in cache:
        hit = cache[key]
        return SmtResult(hit.proved, hit.status, 0.0)
    result = _never_overlap(write_addr, write_width, read_addr, read_width, timeout_ms,
                            None if cache is None else cache.setdefault(_KERNEL_MEMO, {}))
    if cache is not None:
        cache[key] = result
    return result


def canonical(t):
    """``t`` with the operands of every sum and product in one order: equal values of
    commutative rearrangements (``p + 4*i`` and ``4*i + p``) become equal terms.

    >>> from kernelcheck.analysis.terms import Param, Special, add, mul
    >>> p, i = Param("a", 0, 8), Special("%tid.x")
    >>> canonical(add(p, mul(Const(4), i))) == canonical(add(mul(i, Const(4)), p))
    True
    """
    from kernelcheck.analysis.terms import _rebuild, add, mul, render

    memo: dict = {}
    # Operands are ordered by their rendered text, shared between sub-terms and cut at
    # RENDER_LIMIT, never by ``repr``, which prints a term with shared sub-terms in time
    # exponential in its depth. Two operands whose cut texts are equal keep their order:
    # such sums may then stay unequal, which only loses a proof. ``memo`` keeps every
    # rendered term alive, so the text table's ``id`` keys name one term each.
    texts: dict = {}

    def text(x) -> str:
        return render(x, memo=texts)

    def go(x):
        if x is None:
            return None
        key = id(x)
        if key not in memo:
            kind = type(x)
            if kind is Add:
                memo[key] = add(*sorted((go(a) for a in x.args), key=text))
            elif kind is Mul:
                memo[key] = mul(*sorted((go(a) for a in x.args), key=text))
            else:
                memo[key] = _rebuild(x, go)
        return memo[key]

    return go(t)


def _same_thread_gap(a, b) -> int | None:
    """``a - b`` when it is one constant for every thread and instance, else ``None``."""
    from kernelcheck.analysis.lower import affine_form

    fa, fb = affine_form(canonical(a)), affine_form(canonical(b))
    if fa is None or fb is None:
        return None
    sums: dict = {}
    for sign, (const, atoms) in ((1, fa), (-1, fb)):
        for coef, atom in atoms:
            _linear(Mul((coef, atom)) if type(coef) is not Const or coef.value != 1 else atom,
                    sign, sums)
        _linear(const, sign, sums)
    gap = sums.pop(None, 0)
    return gap if not any(sums.values()) else None


def _linear(t, sign: int, sums: dict) -> None:
    """Add ``sign * t`` to ``sums`` (term -> coefficient; ``None`` holds the constant)."""
    stack = [(t, sign)]
    while stack:
        t, k = stack.pop()
        if type(t) is Const:
            sums[None] = sums.get(None, 0) + k * t.value
        elif type(t) is Add:
            stack.extend((x, k) for x in t.args)
        elif type(t) is Mul and type(t.args[0]) is Const:
            rest = t.args[1:]
            stack.append((rest[0] if len(rest) == 1 else Mul(rest), k * t.args[0].value))
        else:
            sums[t] = sums.get(t, 0) + k


def _encoded(z3, term, side: str, memo: dict | None) -> tuple:
    """``(expression, facts)`` of ``term`` encoded on ``side``, from ``memo`` where it was
    encoded before (the entry keeps the term, so its ``id`` names it)."""
    key = (side, id(term))
    found = None if memo is None else memo.get(key)
    if found is not None and found[0] is term:
        return found[1], found[2]
    facts: list = []
    expression = _Encoder(z3, {}, side, facts).enc(term)
    if memo is not None:
        memo[key] = (term, expression, facts)
    return expression, facts


@shielded()
def _never_overlap(write_addr, write_width, read_addr, read_width, timeout_ms,
                   memo: dict | None = None) -> SmtResult:
    """The query of :func:`prove_never_overlap`. ``memo`` (kept for one kernel) holds the
    encoding of each address on each side and, under ``"witnesses"``, models of earlier
    queries that answered "sat", newest first; this query's goes there too.

    An address is encoded once per side: its variables are named by the side and by what
    they stand for, and its facts state the range of each, so the facts of two encodings
    made apart say together what one encoder would say of both.

    The accesses of one kernel that may meet mostly do so in the same way (an in-place
    sort reads and writes one array from every thread), so an execution Z3 found for one
    pair often is one for the next. A model is a full assignment (completed with default
    values for the names it lacks) and the claim is evaluated whole, the facts of both
    accesses included: where it holds, the query is satisfiable and the search would
    answer "sat". Where it does not, the search runs as before, so no proof is lost.
    """
    widths = [_width(write_addr), _width(read_addr)]
    if None in widths or max(widths) > _LIMIT:
        return SmtResult(False, "not encoded", 0.0)
    start = time.perf_counter()
    gap = _same_thread_gap(write_addr, read_addr)
    if gap is not None and -(write_width - 1) <= gap <= read_width - 1:
        # One thread running the access is a witness; no solver needed. (Wraps are part of
        # the atoms, so equal atoms mean equal values, wrapped or not.)
        return SmtResult(False, "sat (same thread)", time.perf_counter() - start)
    z3 = load_z3()

    try:
        w, write_facts = _encoded(z3, write_addr, "w", memo)
        r, read_facts = _encoded(z3, read_addr, "r", memo)
    except (ValueError, TypeError, z3.Z3Exception):
        return SmtResult(False, "not encoded", time.perf_counter() - start)
    facts = [*write_facts, *read_facts]
    witnesses = None if memo is None else memo.setdefault("witnesses", [])
    meet = [w < r + read_width, r < w + write_width]
    if witnesses:
        claim = z3.And(*facts, *meet)
        for model in witnesses:
            if z3.is_true(model.eval(claim, model_completion=True)):
                return SmtResult(False, "sat (an earlier witness)",
                                 time.perf_counter() - start)
    solver = z3.Solver()
    solver.set("rlimit", RLIMIT)
    solver.add(*facts)
    solver.add(*meet)
    answer = check(solver, timeout_ms)
    if answer == z3.sat and witnesses is not None:
        witnesses.insert(0, solver.model())
        del witnesses[_WITNESSES_KEPT:]
    return SmtResult(answer == z3.unsat, str(answer), time.perf_counter() - start)


@shielded()
def prove_same_address(read_addr, write_addr, timeout_ms: int = TIMEOUT_MS, lo: int = 0,
                       hi: int = 0) -> SmtResult:
    """Prove that one thread's read and write always hit the same address, and can run.

    With ``lo``/``hi``, prove instead that the write address minus the read address always
    lies in ``[lo, hi]``: the overlap window of two widths, ``[-(w_write - 1), w_read - 1]``
    (a word read and one of its bytes written back by the same thread).

    Both addresses are encoded for the *same* thread (shared thread indices); the proof
    needs the facts to be satisfiable (some instance runs the accesses) and ``read ==
    write`` to follow from them. Values the analysis does not model (``Opaque``) are refused:
    two loads of one register need not return the same value.

    Examples
    --------
    >>> from kernelcheck.analysis.terms import Param, Special, add, mul, wrap
    >>> p, t = Param("a", 0, 8), Special("%tid.x")
    >>> shl = wrap(add(p, mul(Const(4), wrap(t, 32, True))), 64, False)
    >>> wide = wrap(add(p, mul(wrap(t, 32, True), Const(4))), 64, False)
    >>> prove_same_address(shl, wide).proved
    True
    """
    from kernelcheck.analysis.terms import contains

    if canonical(read_addr) == canonical(write_addr) and lo <= 0 <= hi:
        return SmtResult(True, "equal terms", 0.0)
    if any(contains(t, lambda n: type(n) is Opaque) for t in (read_addr, write_addr)):
        return SmtResult(False, "not encoded", 0.0)
    widths = [_width(read_addr), _width(write_addr)]
    if None in widths or max(widths) > _LIMIT:
        return SmtResult(False, "not encoded", 0.0)
    z3 = load_z3()

    start = time.perf_counter()
    facts: list = []
    shared: dict = {}
    try:
        # One encoder: the write is encoded over the read's thread indices.
        encoder = _Encoder(z3, shared, "t", facts)
        r, w = encoder.enc(read_addr), encoder.enc(write_addr)
    except (ValueError, TypeError, z3.Z3Exception):
        return SmtResult(False, "not encoded", time.perf_counter() - start)
    solver = z3.Solver()
    solver.set("rlimit", RLIMIT)
    solver.add(*facts)
    if check(solver, timeout_ms) != z3.sat:
        return SmtResult(False, "guard not satisfiable", time.perf_counter() - start)
    solver.add(r != w if lo == hi == 0 else z3.Or(w - r < lo, w - r > hi))
    answer = check(solver, timeout_ms)
    return SmtResult(answer == z3.unsat, str(answer), time.perf_counter() - start)
