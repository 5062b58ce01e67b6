"""The term language of symbolic addresses and predicates.

A :class:`Term` denotes a mathematical integer. The bit pattern a PTX register holds is
always *congruent* to the term of its value modulo ``2**width`` of the register: ``add``,
``sub``, ``mul.lo``, ``mad.lo`` and ``shl`` are exact modulo ``2**width`` (PTX ISA §9.7.1),
so the term ``a + b`` is congruent to what ``add.s32`` leaves in its destination whatever
the overflow. Wherever the machine *interprets* a bit pattern (a signed or unsigned compare,
``mul.wide``, ``cvt`` widening, a 64-bit address), the analysis inserts
:class:`Wrap` ``(t, bits, signed)``: the unique integer congruent to ``t`` in the signed range
``[-2**(bits-1), 2**(bits-1))`` or the unsigned range ``[0, 2**bits)``. That keeps the
arithmetic affine where it is and makes every overflow visible in one kind of node, which the
launch-time evaluator checks (see :mod:`kernelcheck.launch.evaluate`).

Leaves: :class:`Const`, :class:`Param` (bytes of the parameter buffer), :class:`Special`
(``%tid.x``, ``%ntid.x``, ...), :class:`Opaque` (a value the analysis does not model, e.g.
loaded from memory), :class:`Iter` (the iteration count of a natural loop) and
:class:`LoopVar` (a loop-carried register before its induction variable is resolved).

:class:`Bound` ``(t, lo, hi)`` records a path-guard fact: on every execution under
consideration, the value of ``t`` lies in ``[lo, hi]``. It is how ``if (i < n)`` narrows the
threads that perform an access. :class:`TripMax` is the largest iteration count of a loop.

Predicates (:class:`Cmp`, :class:`PNot`, :class:`PAnd`, :class:`POr`, :class:`PConst`,
:class:`POpaque`) describe ``setp`` results and branch conditions.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = [
    "Term", "Const", "Param", "ParamAt", "Special", "Global", "Opaque", "LoopVar", "Iter",
    "TripMax", "Add", "Mul", "Wrap", "Min", "Max", "Join", "Div", "Rem", "Shr", "Pow2", "ShrVar",
    "BitAnd", "BitOr", "BitXor", "Bound", "Gate", "NotEq", "Pred", "Cmp", "PNot", "PAnd", "POr",
    "PConst", "POpaque", "THREAD_VARS",
    "DIMS", "add", "mul", "neg", "wrap", "const", "contains", "substitute", "is_launch_constant",
    "render", "pred_not", "children", "forget_equalities", "rejoin_words", "geometry_max",
    "node_kinds", "kind_bits", "has_kind", "Leaves",
]

#: Special registers whose value differs between the threads of one launch, with the
#: dimension that bounds each (``None``: a fixed bound given in the evaluator).
THREAD_VARS = ("%tid.x", "%tid.y", "%tid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z", "%laneid")
#: Special registers fixed for the whole launch.
DIMS = ("%ntid.x", "%ntid.y", "%ntid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z")


class Term:
    """Base class of integer terms.

    Terms are immutable trees shared between many larger terms, and they are dictionary
    keys all through the analysis: each composite term computes its hash once and keeps it
    (:func:`_hash_once`), instead of rehashing the whole tree on every lookup, and the kinds
    of its nodes once they are asked for (:func:`node_kinds`).
    """

    __slots__ = ("_hash", "_bits")


@dataclass(frozen=True, slots=True)
class Const(Term):
    value: int


@dataclass(frozen=True, slots=True)
class Param(Term):
    """``size`` bytes of the parameter buffer at ``offset``, as an unsigned integer.

    ``name`` is the PTX parameter name (plus ``+k`` for a field of a struct parameter).
    """

    name: str
    offset: int
    size: int


@dataclass(frozen=True, slots=True)
class ParamAt(Term):
    """``size`` bytes of the parameter buffer at the byte offset ``offset``, a term that may
    vary between threads (an unsigned little-endian integer).

    A kernel reads a by-value array of its parameters at a computed index: PTX
    ``ld.param.u64 %rd, [%rb+8]`` with ``%rb`` the parameter's address (``mov.b64 %rb,
    k_param_0``) plus an index, SASS ``LDC.64 R2, c[0x0][R0+0x218]``. That is PyTorch's
    ``TensorListMetadata`` (``tl.addresses[k][tl.block_to_tensor[blockIdx.x]]``). The
    launch reads the value from the instance's parameter buffer at every offset ``offset``
    may take (``PARAMX``, :mod:`kernelcheck.launch.check`); a constant offset is a
    :class:`Param`.
    """

    offset: Term
    size: int


@dataclass(frozen=True, slots=True)
class Special(Term):
    name: str


@dataclass(frozen=True, slots=True)
class Global(Term):
    """The address of the module-scope ``.global`` variable ``name``: fixed when the module
    is loaded, unknown to the analysis, and outside every allocation the program makes
    (the driver places module variables in the module's own memory)."""

    name: str


@dataclass(frozen=True, slots=True)
class Opaque(Term):
    """A value the analysis does not model; ``tag`` names its origin, ``bits`` its width.

    ``memory`` is true when the value was loaded from memory (or depends on such a load).
    """

    tag: str
    bits: int = 64
    memory: bool = False


@dataclass(frozen=True, slots=True)
class LoopVar(Term):
    """The value of ``register`` at the header of loop ``header`` (resolved later)."""

    header: int
    register: str


@dataclass(frozen=True, slots=True)
class TripMax(Term):
    """The largest iteration count (0-based) of a loop that continues while ``x <op> bound``.

    ``x0`` is the tested value in iteration 0 and ``step`` its increase per iteration; the
    test is ``Wrap(x, bits, signed) <op> bound`` (``bound`` already wrapped) with ``mode``
    ``lt`` (``<``, increasing ``x``), ``gt`` (``>``, decreasing ``x``) or ``ne`` (``!=``,
    ``x`` moving toward ``bound`` by one, or by a step that divides the distance).
    Evaluation proves no tested value wraps, else the model is invalid for the instance.
    """

    x0: Term
    step: Term
    bound: Term
    bits: int
    signed: bool
    mode: str = "lt"


@dataclass(frozen=True, slots=True)
class Iter(Term):
    """The 0-based iteration count of loop ``header``, in ``[0, tripmax]``."""

    header: int
    tripmax: Term | None


@dataclass(frozen=True, slots=True)
class Add(Term):
    args: tuple[Term, ...]


@dataclass(frozen=True, slots=True)
class Mul(Term):
    args: tuple[Term, ...]


@dataclass(frozen=True, slots=True)
class Wrap(Term):
    arg: Term
    bits: int
    signed: bool


@dataclass(frozen=True, slots=True)
class Min(Term):
    a: Term
    b: Term


@dataclass(frozen=True, slots=True)
class Max(Term):
    a: Term
    b: Term


@dataclass(frozen=True, slots=True)
class Join(Term):
    """A value that is one of ``args`` (a merge of control-flow paths)."""

    args: tuple[Term, ...]


@dataclass(frozen=True, slots=True)
class Div(Term):
    """Integer division truncating toward zero (``div.s32``/``div.u32`` of wrapped values)."""

    a: Term
    b: Term


@dataclass(frozen=True, slots=True)
class Rem(Term):
    a: Term
    b: Term


@dataclass(frozen=True, slots=True)
class Shr(Term):
    """``floor(a / 2**k)`` of the (already wrapped) value ``a``."""

    a: Term
    k: int


@dataclass(frozen=True, slots=True)
class Pow2(Term):
    """``2**min(amount, width)``: the factor of a left shift by a register amount.

    ``amount`` is the (already wrapped, unsigned 32-bit) shift operand. PTX clamps shift
    amounts above the register width to the width (ISA §9.7.8.7, ``shl``), and
    ``x * 2**width`` is congruent to the hardware's 0 modulo ``2**width``, so
    ``x * Pow2(s, w)`` is congruent to ``shl.b<w> x, s`` for every ``s``.
    """

    amount: Term
    width: int


@dataclass(frozen=True, slots=True)
class ShrVar(Term):
    """``floor(a / 2**min(amount, width))`` of the (already wrapped) value ``a``: a right
    shift by a register amount, clamped to the width (ISA §9.7.8.8, ``shr``: an arithmetic
    shift by the width or more leaves the sign, -1 or 0, which is that floor)."""

    a: Term
    amount: Term
    width: int


@dataclass(frozen=True, slots=True)
class BitAnd(Term):
    a: Term
    b: Term


@dataclass(frozen=True, slots=True)
class BitOr(Term):
    a: Term
    b: Term


@dataclass(frozen=True, slots=True)
class BitXor(Term):
    a: Term
    b: Term


@dataclass(frozen=True, slots=True)
class NotEq(Term):
    """``arg`` whose value is known to differ from the launch constant ``value``."""

    arg: Term
    value: Term


@dataclass(frozen=True, slots=True)
class Gate(Term):
    """``arg`` in the executions where ``cond`` (a :class:`Cmp`) holds: no value at all in
    an instance for which ``cond`` is false for every value of its operands. ``selp d, a,
    b, p`` yields ``Join(Gate(a, p), Gate(b, !p))``: a pointer picked by a launch argument
    is one of the two only where the argument picks it."""

    arg: Term
    cond: object


@dataclass(frozen=True, slots=True)
class Bound(Term):
    """``arg`` whose value is known to lie in ``[lo, hi]`` (either side may be ``None``)."""

    arg: Term
    lo: Term | None
    hi: Term | None


# ----------------------------------------------------------------------------- predicates


class Pred:
    __slots__ = ("_hash", "_bits")


@dataclass(frozen=True, slots=True)
class Cmp(Pred):
    """``a op b`` with ``op`` in ``lt le gt ge eq ne``, over already wrapped operands."""

    op: str
    a: Term
    b: Term


@dataclass(frozen=True, slots=True)
class PNot(Pred):
    p: Pred


@dataclass(frozen=True, slots=True)
class PAnd(Pred):
    a: Pred
    b: Pred


@dataclass(frozen=True, slots=True)
class POr(Pred):
    a: Pred
    b: Pred


@dataclass(frozen=True, slots=True)
class PConst(Pred):
    value: bool


@dataclass(frozen=True, slots=True)
class POpaque(Pred):
    tag: str


#: Pairs of distinct term objects found equal (see :func:`forget_equalities`).
_EQUAL: dict[tuple[int, int], tuple] = {}


def forget_equalities() -> None:
    """Drop the remembered equal pairs and wraps (call between kernels: they hold their
    terms)."""
    _EQUAL.clear()
    _WRAPPED.clear()


def _hash_once(cls: type) -> None:
    """Replace the dataclass ``__hash__`` of ``cls`` by one computed once per object (the
    same fields, so equal terms still hash equal)."""
    names = tuple(f.name for f in fields(cls) if f.compare)
    tag = cls.__name__

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            value = hash((tag,) + tuple(getattr(self, n) for n in names))
            object.__setattr__(self, "_hash", value)
            return value

    def __eq__(self, other) -> bool:
        # Identity, then the kept hashes, before the fields: unequal terms differ at once,
        # without a walk of two large trees.
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        if hash(self) != hash(other):
            return False
        key = (id(self), id(other))
        if key in _EQUAL:
            return True
        if all(getattr(self, n) == getattr(other, n) for n in names):
            # Remembered (both kept alive, so the ids stay theirs): two equal graphs with
            # shared subterms are otherwise compared once per path, exponentially often.
            _EQUAL[key] = (self, other)
            return True
        return False

    cls.__hash__ = __hash__
    cls.__eq__ = __eq__


for _cls in (Const, Param, ParamAt, Special, Global, Opaque, LoopVar, TripMax, Iter, Add, Mul, Wrap,
             Min, Max, Join, Div, Rem, Shr, Pow2, ShrVar, BitAnd, BitOr, BitXor, NotEq, Bound,
             Gate, Cmp, PNot, PAnd, POr, PConst, POpaque):
    _hash_once(_cls)
del _cls


_NEGATE = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}


def pred_not(p: Pred) -> Pred:
    """The negation of ``p``, pushed through comparisons and double negations."""
    if type(p) is PNot:
        return p.p
    if type(p) is Cmp:
        return Cmp(_NEGATE[p.op], p.a, p.b)
    if type(p) is PConst:
        return PConst(not p.value)
    return PNot(p)


# ----------------------------------------------------------------------------- builders


def const(value: int) -> Const:
    return Const(int(value))


def add(*terms: Term) -> Term:
    """The sum of ``terms``: nested sums flattened, constants folded, zeros dropped.

    >>> render(add(Param("n", 8, 4), Const(1), Const(2)))
    'n + 3'
    """
    flat: list[Term] = []
    total = 0
    stack = list(reversed(terms))
    while stack:
        t = stack.pop()
        if type(t) is Add:
            stack.extend(reversed(t.args))
        elif type(t) is Const:
            total += t.value
        else:
            flat.append(t)
    if total:
        flat.append(Const(total))
    if not flat:
        return Const(0)
    if len(flat) == 1:
        return flat[0]
    return Add(tuple(flat))


def mul(*terms: Term) -> Term:
    """The product of ``terms``: constants folded, a constant factor first.

    >>> render(mul(Const(4), Special("%tid.x"), Const(2)))
    '8*%tid.x'
    """
    flat: list[Term] = []
    factor = 1
    stack = list(reversed(terms))
    while stack:
        t = stack.pop()
        if type(t) is Mul:
            stack.extend(reversed(t.args))
        elif type(t) is Const:
            factor *= t.value
        else:
            flat.append(t)
    if factor == 0:
        return Const(0)
    if not flat:
        return Const(factor)
    if factor == 1:
        return flat[0] if len(flat) == 1 else Mul(tuple(flat))
    return Mul((Const(factor), *flat))


def rejoin_words(term: Term) -> Term:
    """``term`` with every ``lo32(V) + 2**32 * hi32(V)`` summand pair replaced by ``V``.

    ``Wrap(X, 32, unsigned) + 2**32 * Wrap(Shr(Wrap(X, 64, unsigned), 32), 32, unsigned)``
    is exactly ``Wrap(X, 64, unsigned)``: a value below ``2**64`` is its low word plus
    ``2**32`` times its high word. The SASS lift splits 64-bit values into 32-bit registers
    and joins copies of the halves again; this keeps the joined value one term. The same
    holds of the halves of ``~X``, ``Wrap(-X - 1, 32, u)`` and ``Wrap(-Shr(Y, 32) - 1, 32,
    u)`` with ``Y`` the value ``Wrap(X, 64, u)`` (the high word of ``2**64 - 1 - Y`` is
    ``2**32 - 1 - (Y >> 32)``): together ``Wrap(-X - 1, 64, u)``.

    >>> v = Param("p", 0, 8)
    >>> render(rejoin_words(add(Wrap(v, 32, False),
    ...                         mul(Const(1 << 32), Wrap(Shr(v, 32), 32, False)))))
    'p'
    """
    if type(term) is not Add or len(term.args) < 2:
        return term
    args = term.args
    # The high-word summands ``2**32 * W`` first, each read once (a long sum has many
    # low-word candidates): by the 64-bit value ``V`` when ``W`` is ``hi32(V)``, and in
    # order when ``W`` is ``~hi32(Y)``; a pair is the first high word that fits a low word.
    by_value: dict[Term, int] = {}
    complements: list[tuple[int, Term]] = []
    for j, hi in enumerate(args):
        if type(hi) is not Mul or len(hi.args) != 2 or hi.args[0] != Const(1 << 32):
            continue
        word = hi.args[1]
        if type(word) is Wrap and word.bits == 32 and not word.signed:
            word = word.arg
        if type(word) is Shr and word.k == 32:
            by_value.setdefault(wrap(word.a, 64, False), j)
            continue
        # The halves of ~X: lo32(-X - 1) and ~hi32(X) = -hi32(X) - 1 (mod 2**32).
        negated = add(word, Const(1))
        if type(negated) is Mul and len(negated.args) == 2 and negated.args[0] == Const(
                -1) and type(negated.args[1]) is Shr and negated.args[1].k == 32:
            y = negated.args[1].a
            if wrap(y, 64, False) == y:
                complements.append((j, y))
    if not by_value and not complements:
        return term
    for i, lo in enumerate(args):
        if type(lo) is not Wrap or lo.bits != 32 or lo.signed:
            continue
        j = by_value.get(wrap(lo.arg, 64, False))
        x = None
        for k, y in complements:
            if j is not None and k > j:
                break
            if x is None:
                x = mul(Const(-1), add(lo.arg, Const(1)))
            if y == wrap(x, 64, False):
                rest = [a for n, a in enumerate(args) if n not in (i, k)]
                return rejoin_words(add(wrap(add(mul(Const(-1), x), Const(-1)), 64, False),
                                        *rest))
        if j is not None:
            rest = [a for n, a in enumerate(args) if n not in (i, j)]
            return rejoin_words(add(wrap(lo.arg, 64, False), *rest))
    return term


def neg(term: Term) -> Term:
    return mul(Const(-1), term)


#: Upper bounds of the launch coordinates, those the solver encodings assume
#: (:mod:`kernelcheck.analysis.smt`): at most 1024 threads a block dimension, grid
#: dimensions below ``2**31``.
_GEOMETRY_MAX = {f"%{name}.{axis}": top for axis in "xyz" for name, top in (
    ("tid", 1023), ("ntid", 1024), ("ctaid", (1 << 31) - 2), ("nctaid", (1 << 31) - 1))}


def geometry_max(term: Term) -> int | None:
    """An upper bound of ``term`` when it is a sum or product of launch coordinates and
    non-negative constants (so at least 0); else ``None``."""
    kind = type(term)
    if kind is Special:
        return _GEOMETRY_MAX.get(term.name)
    if kind is Const:
        return term.value if term.value >= 0 else None
    if kind in (Add, Mul):
        total = 0 if kind is Add else 1
        for arg in term.args:
            top = geometry_max(arg)
            if top is None:
                return None
            total = total + top if kind is Add else total * top
        return total
    return None


#: Per ``(id(term), bits, signed)``: the term (kept so its id stays its own) and its
#: :func:`wrap`. Emptied by :func:`forget_equalities`.
_WRAPPED: dict[tuple[int, int, bool], tuple[Term, Term]] = {}


def wrap(term: Term, bits: int, signed: bool) -> Term:
    """``Wrap(term, bits, signed)`` with constants folded, summands that are multiples of
    ``2**bits`` dropped and redundant wraps removed.

    The answer for a term object is kept: guards are applied to every access, and each
    one asks again for the wraps of the sub-terms the accesses share.

    >>> p, q = Param("p", 8, 4), Param("q", 12, 4)
    >>> wrap(add(p, mul(Const(1 << 32), q)), 32, False) == p
    True
    """
    if type(term) is Const:
        v = term.value & ((1 << bits) - 1)
        if signed and v >> (bits - 1):
            v -= 1 << bits
        return Const(v)
    key = (id(term), bits, signed)
    hit = _WRAPPED.get(key)
    if hit is not None and hit[0] is term:
        return hit[1]
    out = _wrap(term, bits, signed)
    _WRAPPED[key] = (term, out)
    return out


def _wrap(term: Term, bits: int, signed: bool) -> Term:
    if type(term) in (Add, Mul):
        # Summands that are multiples of 2**bits vanish modulo 2**bits: the low word of
        # two 32-bit parameters read as one 64-bit word (p + 2**32*q) is p, also as a
        # factor of a product (the 32-bit multiply of that word by an index).
        if _reducible(term, 1 << bits, 2):
            return wrap(_modulo(term, 1 << bits, 2), bits, signed)
    if type(term) is Wrap and term.bits <= bits and (term.signed == signed or (
            not term.signed and term.bits < bits)):
        # An unsigned value of fewer bits fits both interpretations of a wider width; a
        # wrap of the same signedness and no more bits already lies in range.
        return term
    if type(term) in (Param, ParamAt) and not signed and term.size * 8 <= bits:
        return term
    if type(term) is Special and (bits >= 32 and not signed or bits > 32):
        return term  # special registers are 32-bit unsigned values (ISA §10)
    if type(term) in (Add, Mul) and bits >= 32:
        top = geometry_max(term)
        if top is not None and top < 1 << (bits - 1 if signed else bits):
            return term  # sums and products of launch coordinates: a few tens of bits
    if type(term) is Opaque and not signed and term.bits <= bits:
        return term
    if type(term) is Bound and type(term.arg) is Wrap and term.arg.bits <= bits and (
            term.arg.signed == signed or not term.arg.signed and term.arg.bits < bits):
        return term
    return Wrap(term, bits, signed)


def _modulo(term: Term, modulus: int, depth: int) -> Term:
    """``term`` with the summands that are multiples of ``modulus`` dropped from its sums,
    down ``depth`` levels of sums and products (congruent modulo ``modulus``); ``term``
    itself when nothing is dropped."""
    kind = type(term)
    if kind not in (Add, Mul) or depth < 0:
        return term
    args = [_modulo(a, modulus, depth - 1) for a in term.args]
    if kind is Add:
        kept = [a for a in args if not _multiple_of(a, modulus)]
        if len(kept) == len(args) and all(a is b for a, b in zip(args, term.args, strict=True)):
            return term
        return add(*kept)
    if all(a is b for a, b in zip(args, term.args, strict=True)):
        return term
    return mul(*args)


def _reducible(term: Term, modulus: int, depth: int) -> bool:
    """Whether :func:`_modulo` drops a summand of ``term`` (so returns another term),
    answered without building anything: few sums of an address are reducible."""
    kind = type(term)
    if kind not in (Add, Mul) or depth < 0:
        return False
    for a in term.args:
        if kind is Add and _multiple_of(a, modulus):
            return True
        if _reducible(a, modulus, depth - 1):
            return True
    return False


def _multiple_of(term: Term, modulus: int) -> bool:
    """Whether every value of ``term`` is a multiple of ``modulus`` (a constant factor)."""
    if type(term) is Const:
        return term.value % modulus == 0
    return type(term) is Mul and type(term.args[0]) is Const and (
        term.args[0].value % modulus == 0)


# ----------------------------------------------------------------------------- traversal


def _children(t) -> tuple:
    kind = type(t)
    if kind in (Add, Mul, Join):
        return t.args
    if kind is Wrap:
        return (t.arg,)
    if kind is Bound:
        return tuple(x for x in (t.arg, t.lo, t.hi) if x is not None)
    if kind is NotEq:
        return (t.arg, t.value)
    if kind is Gate:
        return (t.arg, t.cond)
    if kind in (Min, Max, Div, Rem, BitAnd, BitOr, BitXor, Cmp, PAnd, POr):
        return (t.a, t.b)
    if kind is Shr:
        return (t.a,)
    if kind is Pow2:
        return (t.amount,)
    if kind is ShrVar:
        return (t.a, t.amount)
    if kind is ParamAt:
        return (t.offset,)
    if kind is PNot:
        return (t.p,)
    if kind is Iter:
        return (t.tripmax,) if t.tripmax is not None else ()
    if kind is TripMax:
        return (t.x0, t.step, t.bound)
    return ()


def children(t) -> tuple:
    """The direct sub-terms (and sub-predicates) of ``t``, in order."""
    return _children(t)


#: Leaf kinds of :func:`opaque_leaves`.
UNDEFINED_LEAF = 1
MEMORY_LEAF = 2
#: Where the leaf kinds sit in the bits :func:`_node_bits` keeps on each node, above the
#: node classes of :func:`node_kinds`.
_LEAF_SHIFT = 40


def _or_fold(term, memo: dict, own) -> int:
    """``own(t)`` or-ed over every node ``t`` of ``term`` (a term or predicate), each node
    computed once: ``memo`` maps ``id(node)`` to ``(node, bits)`` (the node kept so its id
    stays its own) and is filled in, so later calls walk only nodes not seen before."""
    get = memo.get
    hit = get(id(term))
    if hit is not None and hit[0] is term:
        return hit[1]
    stack = [(term, False)]
    while stack:
        t, ready = stack.pop()
        hit = get(id(t))
        if hit is not None and hit[0] is t:
            continue
        kids = _children(t)
        if not ready:
            stack.append((t, True))
            for child in kids:
                # Only the children not answered yet are walked (most are shared).
                hit = get(id(child))
                if hit is None or hit[0] is not child:
                    stack.append((child, False))
            continue
        bits = own(t)
        for child in kids:
            bits |= memo[id(child)][1]
        memo[id(t)] = (t, bits)
    return memo[id(term)][1]


def opaque_leaves(term) -> int:
    """The kinds of opaque leaves under ``term`` (a term or predicate), as bits:
    :data:`UNDEFINED_LEAF` (a register no path defined) and :data:`MEMORY_LEAF` (a value
    loaded from memory).

    The answer is kept on every node (:func:`_node_bits`), so asking again about a term
    that shares sub-terms with one asked before walks only what is new: the large terms of
    unrolled loops are asked about at every join and loop, and a walk each time costs more
    than the rest of their analysis.
    """
    return _node_bits(term) >> _LEAF_SHIFT


class Occurrences:
    """Which of a fixed set of ``targets`` occur in a term (by term equality), for many
    terms that share sub-terms: every node's answer is kept, so each node is walked once
    whatever the number of terms asked about.

    >>> x, y = Param("x", 0, 8), Param("y", 8, 8)
    >>> find = Occurrences([x, y])
    >>> sorted(t.name for t in find.within(add(x, Const(1))))
    ['x']
    """

    def __init__(self, targets) -> None:
        self._targets = list(dict.fromkeys(targets))
        self._index = {t: 1 << i for i, t in enumerate(self._targets)}
        self._masks: dict[int, tuple[object, int]] = {}

    def within(self, term) -> list:
        """The targets that occur in ``term`` (itself included), in the order given."""
        index = self._index
        mask = _or_fold(term, self._masks, lambda t: index.get(t, 0))
        return [t for t, bit in self._index.items() if mask & bit]


class Leaves:
    """The leaves (nodes without sub-terms, constants left out) of many terms that share
    sub-terms, as bit masks: two terms with disjoint masks have no leaf in common. Every
    node's mask is kept, so each node is walked once whatever the number of terms asked
    about.

    >>> x, y = Param("x", 0, 8), Param("y", 8, 8)
    >>> leaves = Leaves()
    >>> bool(leaves.mask(add(x, Const(4))) & leaves.mask(Cmp("lt", x, y)))
    True
    >>> leaves.mask(add(x, Const(4))) & leaves.mask(y)
    0
    """

    def __init__(self) -> None:
        self._bits: dict = {}
        self._masks: dict[int, tuple[object, int]] = {}

    def _own(self, t) -> int:
        if type(t) is Const or _children(t):
            return 0
        bit = self._bits.get(t)
        if bit is None:
            bit = self._bits[t] = 1 << len(self._bits)
        return bit

    def mask(self, term) -> int:
        """The bits of the leaves of ``term`` (a term or predicate); 0 for a constant."""
        return _or_fold(term, self._masks, self._own)


#: The bit of a special register that differs between threads (not one of :data:`DIMS`).
_THREAD_SPECIAL = 1


def kind_bits(*kinds: type) -> int:
    """The bits of :func:`node_kinds` that stand for the node classes ``kinds``."""
    bits = 0
    for kind in kinds:
        bits |= _KIND_BITS[kind]
    return bits


def _own_bits(t) -> int:
    """The bits of one node, its sub-terms left out: its class, a thread-varying special
    register, and the kind of an opaque leaf."""
    kind = type(t)
    bit = _KIND_BITS.get(kind, 0)
    if kind is Special and t.name not in DIMS:
        bit |= _THREAD_SPECIAL
    elif kind is Opaque:
        if t.tag.startswith("undef:"):
            bit |= UNDEFINED_LEAF << _LEAF_SHIFT
        if t.memory:
            bit |= MEMORY_LEAF << _LEAF_SHIFT
    return bit


def _node_bits(term) -> int:
    """:func:`_own_bits` or-ed over every node of ``term``, kept on each node it walks
    (terms are immutable, so the answer is the node's for good): a later question about a
    term that shares sub-terms with this one walks only its new nodes."""
    bits = getattr(term, "_bits", None)
    if bits is not None:
        return bits
    stack = [term]
    while stack:
        t = stack[-1]
        kids = _children(t)
        pending = [k for k in kids if getattr(k, "_bits", None) is None]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        bits = _own_bits(t)
        for kid in kids:
            bits |= kid._bits
        object.__setattr__(t, "_bits", bits)
    return term._bits


def node_kinds(term) -> int:
    """The classes of the nodes of ``term`` (a term or predicate) as bits (test them with
    :func:`kind_bits`), plus a bit for a special register that differs between threads.

    The answer is kept on every node (:func:`_node_bits`), so the questions asked of the
    shared sub-terms of one kernel's many terms walk each node once.

    >>> t = add(Param("p", 0, 8), Opaque("v"))
    >>> bool(node_kinds(t) & kind_bits(Opaque)), bool(node_kinds(t) & kind_bits(Div))
    (True, False)
    """
    return _node_bits(term) & _KIND_MASK


def has_kind(term, *kinds: type) -> bool:
    """Whether some node of ``term`` is of one of the classes ``kinds``."""
    return bool(node_kinds(term) & kind_bits(*kinds))


def contains(term, predicate) -> bool:
    """Whether some node of ``term`` (a term or predicate) satisfies ``predicate``."""
    stack = [term]
    seen: set[int] = set()
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        if predicate(t):
            return True
        stack.extend(_children(t))
    return False


def is_launch_constant(term) -> bool:
    """Whether ``term`` has one value for the whole launch (params, dims and constants)."""
    return not node_kinds(term) & _VARYING


_NODE_KINDS = (Const, Param, ParamAt, Special, Global, Opaque, LoopVar, TripMax, Iter, Add, Mul,
               Wrap, Min, Max, Join, Div, Rem, Shr, Pow2, ShrVar, BitAnd, BitOr, BitXor, NotEq,
               Bound, Gate, Cmp, PNot, PAnd, POr, PConst, POpaque)
_KIND_BITS = {kind: 1 << (i + 1) for i, kind in enumerate(_NODE_KINDS)}
_VARYING = kind_bits(Opaque, LoopVar, Iter, Join) | _THREAD_SPECIAL
_KIND_MASK = (1 << _LEAF_SHIFT) - 1


def substitute(term, mapping: dict, memo: dict | None = None, keep=None):
    """``term`` with every node found in ``mapping`` replaced (bottom-up, memoised).

    ``memo`` (a dict the caller keeps, for one ``mapping``) shares the work, and the
    rebuilt sub-terms, between calls on terms that share sub-terms: the accesses of a
    kernel do, and rebuilding them one by one would give each its own copy of the shared
    parts, which every later walk would then meet once per access. ``keep``, a predicate
    true of sub-terms that hold no key of ``mapping``, returns those sub-terms themselves
    instead of a rebuilt copy.
    """
    if memo is None:
        memo = {}

    def go(t):
        if t is None:
            return None
        key = id(t)
        hit = memo.get(key)
        # The node is kept beside its answer, so its id stays its own.
        if hit is not None and hit[0] is t:
            return hit[1]
        if t in mapping:
            out = mapping[t]
        elif keep is not None and keep(t):
            out = t
        else:
            out = _rebuild(t, go)
        memo[key] = (t, out)
        return out

    return go(term)


def _rebuild(t, go):
    kind = type(t)
    if kind is Add:
        return rejoin_words(add(*(go(a) for a in t.args)))
    if kind is Mul:
        return mul(*(go(a) for a in t.args))
    if kind is Join:
        return Join(tuple(go(a) for a in t.args))
    if kind is Wrap:
        return wrap(go(t.arg), t.bits, t.signed)
    if kind is Bound:
        return Bound(go(t.arg), go(t.lo), go(t.hi))
    if kind is NotEq:
        return NotEq(go(t.arg), go(t.value))
    if kind is Gate:
        return Gate(go(t.arg), go(t.cond))
    if kind in (Min, Max, Div, Rem, BitAnd, BitOr, BitXor, Cmp):
        a, b = go(t.a), go(t.b)
        return kind(t.op, a, b) if kind is Cmp else kind(a, b)
    if kind in (PAnd, POr):
        return kind(go(t.a), go(t.b))
    if kind is Shr:
        return Shr(go(t.a), t.k)
    if kind is Pow2:
        return Pow2(go(t.amount), t.width)
    if kind is ShrVar:
        return ShrVar(go(t.a), go(t.amount), t.width)
    if kind is ParamAt:
        return ParamAt(go(t.offset), t.size)
    if kind is PNot:
        return PNot(go(t.p))
    if kind is Iter:
        return Iter(t.header, go(t.tripmax))
    if kind is TripMax:
        return TripMax(go(t.x0), go(t.step), go(t.bound), t.bits, t.signed, t.mode)
    return t


# ----------------------------------------------------------------------------- printing


#: The longest text :func:`render` writes for one term (longer ones end in an ellipsis).
RENDER_LIMIT = 600


def render(term, names: dict[str, str] | None = None, memo: dict | None = None) -> str:
    """A compact C-like rendering of a term or predicate, for reasons and reports.

    ``names`` maps PTX parameter names to source names; the text stops at
    :data:`RENDER_LIMIT` characters. ``memo`` (a dict the caller keeps
    while the terms are alive) shares the text of subterms between calls: the guards of a
    kernel's accesses are mostly the same terms.
    """
    return _render(term, names or {}, {} if memo is None else memo)


def _render(term, names: dict[str, str], memo: dict) -> str:
    found = memo.get(id(term))
    if found is not None and found[0] is term:
        return found[1]
    text = _render_node(term, names, memo)
    if len(text) > RENDER_LIMIT:
        # A term is a graph with shared subterms; written out as a tree it can grow
        # exponentially. Past the limit the text is cut (it is for reading, not parsing).
        text = text[:RENDER_LIMIT - 1] + "…"
    memo[id(term)] = (term, text)
    return text


def _render_node(term, names: dict[str, str], memo: dict) -> str:
    kind = type(term)
    if kind is Const:
        return str(term.value) if abs(term.value) < 1 << 16 else hex(term.value)
    if kind is Param:
        return names.get(term.name, term.name)
    if kind is ParamAt:
        return f"param[{_render(term.offset, names, memo)}]"
    if kind is Special:
        return term.name
    if kind is Opaque:
        return f"?{term.tag}"
    if kind is Global:
        return f"&{term.name}"
    if kind is LoopVar:
        return f"loop{term.header}:{term.register}"
    if kind is Iter:
        return f"k{term.header}"
    if kind is TripMax:
        return _concat("tripmax(", lambda: _render(term.x0, names, memo), " < ",
                       lambda: _render(term.bound, names, memo), ")")
    if kind is Add:
        out = _render(term.args[0], names, memo)
        for a in term.args[1:]:
            if len(out) > RENDER_LIMIT:
                break  # cut before the rest anyway
            if type(a) is Const and a.value < 0:
                out += f" - {_render(Const(-a.value), names, memo)}"
            elif type(a) is Mul and type(a.args[0]) is Const and a.args[0].value < 0:
                out += f" - {_render(mul(Const(-1), a), names, memo)}"
            else:
                out += f" + {_render(a, names, memo)}"
        return out
    if kind is Mul:
        return _concat(*_separated("*", [lambda a=a: _paren(a, names, memo)
                                         for a in term.args]))
    if kind is Wrap:
        return _render(term.arg, names, memo) if type(term.arg) is not Add else (
            f"({_render(term.arg, names, memo)})")
    if kind in (Bound, NotEq, Gate):
        return _render(term.arg, names, memo)
    if kind in (Min, Max):
        return _concat(f"{kind.__name__.lower()}(", lambda: _render(term.a, names, memo),
                       ", ", lambda: _render(term.b, names, memo), ")")
    if kind is Join:
        return _concat("one of(", *_separated(", ", [lambda a=a: _render(a, names, memo)
                                                     for a in term.args]), ")")
    if kind in (Div, Rem, BitAnd, BitOr, BitXor):
        op = {Div: "/", Rem: "%", BitAnd: "&", BitOr: "|", BitXor: "^"}[kind]
        return _concat(lambda: _paren(term.a, names, memo), f" {op} ",
                       lambda: _paren(term.b, names, memo))
    if kind is Shr:
        return f"{_paren(term.a, names, memo)} >> {term.k}"
    if kind is Pow2:
        return f"(1 << {_paren(term.amount, names, memo)})"
    if kind is ShrVar:
        return _concat(lambda: _paren(term.a, names, memo), " >> ",
                       lambda: _paren(term.amount, names, memo))
    if kind is Cmp:
        op = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}[term.op]
        return _concat(lambda: _render(term.a, names, memo), f" {op} ",
                       lambda: _render(term.b, names, memo))
    if kind is PNot:
        return f"!({_render(term.p, names, memo)})"
    if kind is PAnd:
        return _concat(lambda: _render(term.a, names, memo), " && ",
                       lambda: _render(term.b, names, memo))
    if kind is POr:
        return _concat("(", lambda: _render(term.a, names, memo), " || ",
                       lambda: _render(term.b, names, memo), ")")
    if kind is PConst:
        return "true" if term.value else "false"
    if kind is POpaque:
        return f"?{term.tag}"
    return repr(term)


def _concat(*parts) -> str:
    """``parts`` joined left to right (a string, or a function giving one), calling no
    function once the text is past :data:`RENDER_LIMIT`: :func:`_render` cuts the text
    before anything it would add, so the result is the same and the terms under it are not
    walked (a term of an unrolled kernel can have a million nodes)."""
    out = ""
    for part in parts:
        if len(out) > RENDER_LIMIT:
            break
        out += part if type(part) is str else part()
    return out


def _separated(separator: str, parts: list) -> list:
    """``parts`` with ``separator`` between each two, for :func:`_concat`."""
    out: list = []
    for part in parts:
        if out:
            out.append(separator)
        out.append(part)
    return out


def _paren(t, names, memo) -> str:
    text = _render(t, names, memo)
    return f"({text})" if type(t) in (Add, Div, Rem, BitAnd, BitOr, BitXor) else text
