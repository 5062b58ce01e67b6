"""From symbolic accesses to a LaunchCheck: guard facts, affine forms and the flat program.

* :func:`apply_guards` rewrites an address term so that every sub-term a path-guard literal
  constrains becomes :class:`~kernelcheck.analysis.terms.Bound`. Soundness: the access runs
  only when its guard holds, so on every execution the constrained value satisfies the
  literal. Inside ``Wrap(t, w, _)`` any summand or factor ``u`` may be replaced by
  ``Wrap(u, w, s)``, since both are congruent modulo ``2**w`` and the outer wrap only sees
  the residue; this is how ``if (i < n)`` on a 32-bit ``i`` reaches a 64-bit address sum.
  Disjunctions and opaque predicates are dropped (a weaker guard is still a sound one).
* :func:`affine_form` splits an address into a launch-constant part and
  ``coefficient * atom`` terms; atoms are guard-bounded or thread-varying sub-terms. The
  evaluator uses it only when every stripped wrap was the identity for the instance.
* :func:`lower` compiles terms into the SSA program of :mod:`kernelcheck.launch.check`.
"""

from __future__ import annotations

from kernelcheck.analysis.terms import (
    DIMS,
    THREAD_VARS,
    Add,
    BitAnd,
    BitOr,
    BitXor,
    Bound,
    Cmp,
    Const,
    Div,
    Gate,
    Global,
    Iter,
    Join,
    Leaves,
    Max,
    Min,
    Mul,
    NotEq,
    Opaque,
    PAnd,
    Param,
    ParamAt,
    PNot,
    POr,
    Pow2,
    Rem,
    Shr,
    ShrVar,
    Special,
    Term,
    TripMax,
    Wrap,
    add,
    is_launch_constant,
    mul,
    pred_not,
    wrap,
)
from kernelcheck.launch.check import CMP_NAMES, OPS, TRIP_MODES

__all__ = ["guard_literals", "apply_guards", "affine_form", "residue_bits", "ProgramBuilder"]


def guard_literals(guard) -> list[Cmp]:
    """The comparison literals implied by a conjunction of predicates."""
    out: list[Cmp] = []
    stack = list(guard)
    while stack:
        p = stack.pop()
        kind = type(p)
        if kind is Cmp:
            out.append(p)
        elif kind is PAnd:
            stack.extend((p.a, p.b))
        elif kind is PNot:
            inner = p.p
            if type(inner) is POr:
                stack.extend((pred_not(inner.a), pred_not(inner.b)))
            elif type(inner) in (Cmp, PNot):
                stack.append(pred_not(inner))
    return out


def _constraints(literals) -> dict:
    cons: dict = {}

    def put(term, lo=None, hi=None, ne=None):
        if type(term) is Const:
            return
        entry = cons.setdefault(term, [[], [], []])
        if lo is not None:
            entry[0].append(lo)
        if hi is not None:
            entry[1].append(hi)
        if ne is not None:
            entry[2].append(ne)

    for lit in literals:
        a, b, op = lit.a, lit.b, lit.op
        if op == "lt":
            put(a, hi=add(b, Const(-1)))
            put(b, lo=add(a, Const(1)))
        elif op == "le":
            put(a, hi=b)
            put(b, lo=a)
        elif op == "gt":
            put(a, lo=add(b, Const(1)))
            put(b, hi=add(a, Const(-1)))
        elif op == "ge":
            put(a, lo=b)
            put(b, hi=a)
        elif op == "eq":
            put(a, lo=b, hi=b)
            put(b, lo=a, hi=a)
        elif op == "ne":
            if is_launch_constant(b):
                put(a, ne=b)
            if is_launch_constant(a):
                put(b, ne=a)
    # ``k*x <= h`` with ``k > 0`` bounds ``x`` by ``h / k`` (truncated toward zero: for a
    # negative ``h`` the looser bound). A test of ``4*tid < n`` before a loop over ``tid``,
    # ``tid + ntid``, ... bounds the loop's first value, which no loop test bounds.
    for term in list(cons):
        if type(term) is Mul and len(term.args) == 2 and type(term.args[0]) is Const and (
                term.args[0].value > 0) and type(term.args[1]) is not Const:
            for hi in list(cons[term][1]):
                put(term.args[1], hi=Div(hi, term.args[0]))
    return cons


def _bounded(term, entry):
    for lo in entry[0]:
        term = Bound(term, lo, None)
    for hi in entry[1]:
        term = Bound(term, None, hi)
    for value in entry[2]:
        # After the range bounds: removing an end point of a range tightens it.
        term = NotEq(term, value)
    return term


def _shifted(cons: dict) -> dict:
    """``{Wrap(x, w, s): (key, c)}`` for each constrained ``key = Wrap(x + c, w, s)``.

    ``Wrap(Wrap(x + c, w, s) - c, w, s)`` equals ``Wrap(x, w, s)`` for every ``x`` (both
    sides are congruent modulo ``2**w`` and wrapped to the same range), so a fact about
    ``x + c`` bounds ``x`` exactly; the evaluator's WRAP checks the shifted range fits.
    An unwrapped ``key = x + c`` (launch coordinates, whose wraps simplify away when they
    fit: :func:`kernelcheck.analysis.terms.wrap`) bounds ``x = key - c`` as integers.
    """
    out: dict = {}
    for key in cons:
        if type(key) is Wrap and type(key.arg) is Add and type(key.arg.args[-1]) is Const:
            c = key.arg.args[-1].value
            base = wrap(add(*key.arg.args[:-1]), key.bits, key.signed)
            if base not in cons and base not in out:
                out[base] = (key, c)
        elif type(key) is Add and type(key.args[-1]) is Const:
            base = add(*key.args[:-1])
            if base not in cons and base not in out:
                out[base] = (key, key.args[-1].value)
    return out


def apply_guards(address: Term, guard, cache: dict | None = None) -> Term:
    """``address`` with the facts of ``guard`` attached as :class:`Bound` nodes.

    ``cache`` (a dict the caller keeps while the terms are alive, empty at first) shares
    the work between calls whose guards hold the same facts about the address: only the
    literals that share a leaf with the address are applied (no other literal can bound a
    sub-term of it, so the result is the same), and calls applying the same literals share
    one memo. The accesses of one block share both guard and sub-terms; so do, through
    this, the accesses of the arms of a ``switch`` on a launch argument that touch the
    same address (the cases of a dtype dispatch), whose guards differ only in the case.

    Examples
    --------
    >>> from kernelcheck.analysis.terms import Special, render
    >>> t = Special("%tid.x")
    >>> g = (Cmp("lt", t, Param("n", 8, 4)),)
    >>> type(apply_guards(add(Param("p", 0, 8), t), g).args[1]).__name__
    'Bound'
    """
    if cache is None:
        leaves = Leaves()
        shared = _facts(guard_literals(guard), None, leaves)
    else:
        shared = _shared_facts(address, guard, cache)
        leaves = cache["leaves"]
    cons, shifted, memo, sums, rewrites, key_leaves = shared
    if not rewrites:
        return address

    def shift(t):
        # ``t`` is ``wrap(x, key.bits, key.signed)``, which may have simplified to ``x``
        # itself (a special register that fits the width): the width is the key's.
        key, c = shifted[t]
        if type(key) is not Wrap:
            return add(_bounded(key, cons[key]), Const(-c))
        return Wrap(add(_bounded(key, cons[key]), Const(-c)), key.bits, key.signed)

    def go(t, ctx):
        key = (id(t), ctx)
        found = memo.get(key)
        if found is not None and found[0] is t:
            return found[1]
        out = _go(t, ctx)
        memo[key] = (t, out)
        return out

    def _go(t, ctx):
        kind = type(t)
        if ctx and kind is Param and t.size * 8 == ctx:
            # Inside a wrap of the parameter's own width only its residue matters; reading
            # it as signed keeps small negative values (an offset of -1) small.
            t = wrap(t, ctx, True)
            return _bounded(t, cons[t]) if t in cons else t
        if t in cons:
            return _bounded(_children(t, None), cons[t])
        if t in shifted:
            return shift(t)
        # A wrap of ``t`` keeps some of its leaves and gains none: it can equal a
        # constrained key only where every leaf of the key is a leaf of ``t``, which most
        # sub-terms of a large address are not.
        if ctx and kind not in (Const, Param, Wrap, Bound) and _may_hold_a_key(
                leaves.mask(t), key_leaves):
            for signed in (True, False):
                w = wrap(t, ctx, signed)
                if w in cons:
                    return _bounded(w, cons[w])
                if w in shifted:
                    return shift(w)
        return _children(t, ctx)

    def _children(t, ctx):
        # A node none of whose children changed is returned itself, not a copy: the
        # accesses of a kernel share their sub-terms, and so do their guarded addresses
        # wherever no fact applies (every walk of them then meets each shared node once).
        kind = type(t)
        if kind is Add:
            return _sum(t, ctx)
        if kind in (Mul, Join):
            args = tuple(go(a, ctx) for a in t.args)
            if all(x is y for x, y in zip(args, t.args, strict=True)):
                return t
            return mul(*args) if kind is Mul else Join(args)
        if kind is Wrap:
            arg = go(t.arg, t.bits)
            return t if arg is t.arg else Wrap(arg, t.bits, t.signed)
        if kind in (Min, Max, Div, Rem, BitAnd, BitOr, BitXor):
            a, b = go(t.a, None), go(t.b, None)
            return t if a is t.a and b is t.b else kind(a, b)
        if kind is Shr:
            a = go(t.a, None)
            return t if a is t.a else Shr(a, t.k)
        if kind is ShrVar:
            a, amount = go(t.a, None), go(t.amount, None)
            return t if a is t.a and amount is t.amount else ShrVar(a, amount, t.width)
        if kind is Pow2:
            amount = go(t.amount, None)
            return t if amount is t.amount else Pow2(amount, t.width)
        if kind is Bound:
            arg = go(t.arg, None)
            return t if arg is t.arg else Bound(arg, t.lo, t.hi)
        if kind is NotEq:
            arg = go(t.arg, None)
            return t if arg is t.arg else NotEq(arg, t.value)
        if kind is Gate:
            arg = go(t.arg, ctx)
            return t if arg is t.arg else Gate(arg, t.cond)
        if kind is ParamAt:
            offset = go(t.offset, None)
            return t if offset is t.offset else ParamAt(offset, t.size)
        return t

    def constrained_sums(ctx):
        # The constrained keys that are sums (or wraps of a sum at the width ``ctx``), in
        # the order of ``cons``: only they can be sub-sums of a larger sum.
        found = sums.get(ctx)
        if found is None:
            found = sums[ctx] = []
            for c in cons:
                inner = c.arg if type(c) is Wrap and c.bits == ctx else c
                if type(inner) is Add:
                    found.append((c, inner))
        return found

    def _sum(t, ctx):
        # A constrained sum may be a sub-sum of a flattened Add (``p + (i0 + tid)``).
        args = list(t.args)
        out = []
        if ctx:
            for c, inner in constrained_sums(ctx):
                if len(inner.args) < len(args) and all(
                        inner.args.count(x) <= args.count(x) for x in inner.args):
                    for x in inner.args:
                        args.remove(x)
                    out.append(_bounded(c, cons[c]))
        kept = [go(a, ctx) for a in args]
        if not out and all(x is y for x, y in zip(kept, t.args, strict=True)):
            return t
        return add(*out, *kept)

    try:
        return go(address, None)
    finally:
        # The helpers above refer to one another: unbound, they and the memo they hold
        # are freed on return instead of waiting for the cyclic collector.
        go = _go = _children = _sum = shift = constrained_sums = None  # noqa: F841


def _shared_facts(address: Term, guard, cache: dict) -> tuple:
    """The facts (and the memo of :func:`apply_guards`) for the literals of ``guard`` that
    share a leaf with ``address``, one entry per distinct set of such literals."""
    if not cache:
        cache.update(literals={}, facts={}, leaves=Leaves())
    found = cache["literals"].get(guard)
    if found is None:
        literals = tuple(guard_literals(guard))
        # Whether the guard has any fact: only then are the parameters inside a wrap of
        # their width rewritten (as signed), whether or not a fact applies to the address.
        found = cache["literals"][guard] = (literals, bool(_constraints(literals)))
    literals, rewrites = found
    leaves = cache["leaves"]
    mask = leaves.mask(address)
    # A literal without leaves (constants only) is kept: it constrains no sub-term, and
    # keeping it costs nothing.
    relevant = tuple(lit for lit in literals
                     if not (m := leaves.mask(lit)) or m & mask)
    shared = cache["facts"].get((relevant, rewrites))
    if shared is None:
        shared = cache["facts"][relevant, rewrites] = _facts(relevant, rewrites, leaves)
    return shared


def _facts(literals, rewrites: bool | None, leaves: Leaves) -> tuple:
    """``(constraints, shifted, memo, sums, rewrites, key_leaves)`` for :func:`apply_guards`:
    the facts of ``literals``, the memo tables of the walks that apply them, whether the
    walk rewrites at all (``None``: whenever there is a fact) and the leaves of the
    constrained keys (one mask per distinct set)."""
    cons = _constraints(literals)
    shifted = _shifted(cons) if cons else {}
    key_leaves = tuple({leaves.mask(key) for key in (*cons, *shifted)})
    return cons, shifted, {}, {}, bool(cons) if rewrites is None else rewrites, key_leaves


def _may_hold_a_key(mask: int, key_leaves: tuple[int, ...]) -> bool:
    """Whether a term with the leaves ``mask`` may hold all the leaves of some key."""
    return not mask or any(not k & ~mask for k in key_leaves)


def affine_form(address: Term):
    """``(constant_term, ((coefficient_term, atom_term), ...))`` or ``None``.

    Wraps, sums and products with a launch-constant factor are looked through; any other
    thread-varying node is an atom.
    """
    const_parts: list[Term] = []
    atoms: dict = {}
    stack = [(address, Const(1))]
    while stack:
        t, coef = stack.pop()
        kind = type(t)
        if is_launch_constant(t):
            const_parts.append(mul(coef, t))
        elif kind is Wrap:
            stack.append((t.arg, coef))
        elif kind is Add:
            stack.extend((a, coef) for a in t.args)
        elif kind is Mul:
            consts = [a for a in t.args if is_launch_constant(a)]
            rest = [a for a in t.args if not is_launch_constant(a)]
            if len(rest) == 1:
                stack.append((rest[0], mul(coef, *consts)))
            else:
                atoms.setdefault(t, []).append(coef)
        else:
            atoms.setdefault(t, []).append(coef)
    pairs = []
    for atom, coefs in atoms.items():
        pairs.append((add(*coefs), atom))
    if len(pairs) > 4:
        return None
    return add(*const_parts), tuple(pairs)


def residue_bits(address: Term) -> int:
    """``m``: ``address`` is congruent to its :func:`affine_form` modulo ``2**m``.

    The affine form looks through wraps. ``Wrap(x, w, _)`` is congruent to ``x`` modulo
    ``2**w`` only, so where a wrap sits under a constant factor ``c`` the form holds modulo
    ``2**(w + v)`` with ``2**v`` the largest power of two dividing ``c``
    (``4*Wrap(i + off, 32, s)`` is ``4*i + 4*off`` modulo ``2**34``); ``m`` is the least such
    bound over the wraps the form looks through, and at most 64 (the address register).
    Launch-constant parts are computed exactly at launch and limit nothing; a factor that
    is only known at launch counts as odd (a smaller ``m`` is a weaker, still true, claim).

    Examples
    --------
    >>> from kernelcheck.analysis.terms import Special
    >>> i = Special("%tid.x")
    >>> residue_bits(wrap(add(Param("p", 0, 8), mul(Const(4), Wrap(i, 32, True))), 64, False))
    34
    """
    m = 64
    stack = [(address, 0)]
    while stack:
        t, v = stack.pop()
        kind = type(t)
        if is_launch_constant(t):
            continue
        if kind is Wrap:
            m = min(m, t.bits + v)
            stack.append((t.arg, v))
        elif kind is Add:
            stack.extend((a, v) for a in t.args)
        elif kind is Mul:
            rest = [a for a in t.args if not is_launch_constant(a)]
            if len(rest) == 1:
                for a in t.args:
                    if type(a) is Const and a.value:
                        v += (a.value & -a.value).bit_length() - 1
                stack.append((rest[0], v))
    return max(m, 0)


class _SlotView:
    """The slots lowered so far, looked up by node (``done[id(node)]`` in ``_lower_one``)."""

    __slots__ = ("_lowered",)

    def __init__(self, lowered: dict) -> None:
        self._lowered = lowered

    def __contains__(self, node) -> bool:
        hit = self._lowered.get(id(node))
        return hit is not None and hit[0] is node

    def __getitem__(self, key: int) -> int:
        return self._lowered[key][1]


class ProgramBuilder:
    """Compiles terms into the SSA program of a LaunchCheck, sharing equal sub-terms."""

    def __init__(self) -> None:
        self.records: list[tuple[int, int, int, int, int]] = []
        self._slots: dict = {}
        #: ``id(node) -> (node, slot)`` of every node lowered (see :meth:`slot`).
        self._lowered: dict[int, tuple[object, int]] = {}

    def _emit(self, op: str, a=0, b=0, c=0, d=0) -> int:
        record = (OPS[op], a, b, c, d)
        if record in self._slots:
            return self._slots[record]
        self.records.append(record)
        slot = len(self.records) - 1
        self._slots[record] = slot
        return slot

    def slot(self, term) -> int:
        """The slot computing ``term`` (iterative post-order over the term DAG).

        Every node's slot is kept for the builder's life (with the node, so its ``id``
        stays its own): the accesses of a kernel share most of their terms, and each is
        lowered once.
        """
        lowered = self._lowered
        hit = lowered.get(id(term))
        if hit is not None and hit[0] is term:
            return hit[1]
        done = _SlotView(lowered)
        stack = [(term, False)]
        while stack:
            t, expanded = stack.pop()
            if t is None or t in done:
                continue
            kids = _kids(t)
            if not expanded and kids:
                stack.append((t, True))
                stack.extend((k, False) for k in kids if k is not None and k not in done)
                continue
            lowered[id(t)] = (t, self._lower_one(t, done))
        return lowered[id(term)][1]

    def guard(self, literals) -> int:
        """The slot of the conjunction of comparison ``literals`` (``CMP`` records joined by
        ``MIN``: 0 once one of them is false), or -1 when there are none."""
        slot = -1
        for lit in literals:
            a, b = self.slot(lit.a), self.slot(lit.b)
            c = self._emit("CMP", a, b, CMP_NAMES.index(lit.op))
            slot = c if slot < 0 else self._emit("MIN", slot, c)
        return slot

    def _lower_one(self, t, done) -> int:
        kind = type(t)

        def s(x):
            return done[id(x)] if x is not None else -1

        if kind is Const:
            if not -(1 << 63) <= t.value < 1 << 63:
                return self._emit("OPAQUE", 64)
            return self._emit("CONST", c=t.value)
        if kind is Param:
            return self._emit("PARAM", t.offset, t.size)
        if kind is ParamAt:
            return self._emit("PARAMX", s(t.offset), t.size)
        if kind is Special:
            if t.name in DIMS:
                return self._emit("DIM", DIMS.index(t.name))
            if t.name in THREAD_VARS:
                return self._emit("TVAR", THREAD_VARS.index(t.name))
            return self._emit("OPAQUE", 32)
        if kind is Opaque:
            return self._emit("OPAQUE", min(t.bits, 64))
        if kind is Global:
            return self._emit("OPAQUE", 64)  # fixed at load time, unknown here
        if kind in (Add, Mul, Join):
            op = {Add: "ADD", Mul: "MUL", Join: "JOIN"}[kind]
            slot = s(t.args[0])
            for a in t.args[1:]:
                slot = self._emit(op, slot, s(a))
            return slot
        if kind is Wrap:
            return self._emit("WRAP", s(t.arg), t.bits, int(t.signed))
        if kind in (Min, Max, Div, Rem, BitAnd, BitOr, BitXor):
            op = {Min: "MIN", Max: "MAX", Div: "DIV", Rem: "REM", BitAnd: "AND",
                  BitOr: "OR", BitXor: "XOR"}[kind]
            return self._emit(op, s(t.a), s(t.b))
        if kind is Shr:
            return self._emit("SHR", s(t.a), t.k)
        if kind is Pow2:
            return self._emit("POW2", s(t.amount), t.width)
        if kind is ShrVar:
            return self._emit("SHRV", s(t.a), s(t.amount), t.width)
        if kind is Bound:
            return self._emit("BOUND", s(t.arg), s(t.lo), s(t.hi))
        if kind is NotEq:
            return self._emit("NEQ", s(t.arg), s(t.value))
        if kind is Gate:
            return self._emit("GATE", s(t.arg), self.guard((t.cond,)))
        if kind is Iter:
            return self._emit("ITER", s(t.tripmax))
        if kind is TripMax:
            return self._emit("TRIPMAX", s(t.x0), s(t.step), s(t.bound),
                              t.bits | (int(t.signed) << 8) | (TRIP_MODES.index(t.mode) << 9))
        return self._emit("OPAQUE", 64)  # LoopVar left unresolved: any value


def _kids(t) -> tuple:
    kind = type(t)
    if kind in (Add, Mul, Join):
        return t.args
    if kind is Wrap:
        return (t.arg,)
    if kind in (Min, Max, Div, Rem, BitAnd, BitOr, BitXor):
        return (t.a, t.b)
    if kind is Shr:
        return (t.a,)
    if kind is Pow2:
        return (t.amount,)
    if kind is ShrVar:
        return (t.a, t.amount)
    if kind is ParamAt:
        return (t.offset,)
    if kind is Bound:
        return (t.arg, t.lo, t.hi)
    if kind is NotEq:
        return (t.arg, t.value)
    if kind is Gate:
        return (t.arg,)  # the condition is lowered by ProgramBuilder.guard
    if kind is Iter:
        return (t.tripmax,) if t.tripmax is not None else ()
    if kind is TripMax:
        return (t.x0, t.step, t.bound)
    return ()
