"""Base pointers of address terms, and when an allocation may bound an access.

An address term of a global access is usually ``Wrap(P + R, 64, unsigned)``: ``P`` a pointer
parameter (a 64-bit :class:`~kernelcheck.analysis.terms.Param` summand) and ``R`` an offset.
Two questions are asked of it:

* :func:`base_param`: which parameter the address is *named* after (reports, the residue
  test, the pairing of accesses with the same base). Naming never decides a verdict alone.
* :func:`narrowing_base`: whether the launch check may bound the access by the allocation
  ``P`` points into (allocation-aware bounds, :mod:`kernelcheck.launch.evaluate`). That relies
  on the **in-bounds assumption**: pointer arithmetic from ``P`` stays inside the object ``P``
  points to (CUDA C++ leaves anything else undefined). The assumption is about the *source*
  program, so it may only be used where the compiled address shows that ``P`` really is the
  base the program indexed from, i.e. where nothing in ``R`` can carry a pointer:

  - ``R`` holds no other pointer-wide parameter, under any operation: compilers rebase one
    pointer on another (``out + (in - out) + 4*i`` addresses ``in``; loop strength reduction
    emits such sums), so a parameter difference in ``R`` means ``P`` may not be the base;
  - ``R`` holds no value the analysis did not model (an ``Opaque`` that is not a memory
    load: an instruction without semantics, a 64-bit shift the lift left opaque). Unmodelled
    arithmetic is not an indirect access through memory: it may compute anything, a pointer
    difference included;
  - a value loaded from memory enters ``R`` only as an *index*: narrowed to at most 32 bits,
    or scaled by a constant of magnitude two or more. A full 64-bit loaded value added as it
    is may itself be the pointer (``q[n]`` with ``q`` loaded and ``n`` a 64-bit integer
    parameter compiles to ``n + q``, which names ``n`` as the base).

  Accesses that fail the test keep their exact interval bounds but are never narrowed: with
  an opaque offset their bytes are unknown (``not_proven``).
* :func:`rebased_base`: the one exception, checked at launch. ``R = T + I`` where ``I`` passes
  the test above and ``T`` holds the other pointer-wide parameters, each only as an index
  (scaled by a constant of magnitude two or more, or narrowed to 32 bits), and ``P`` itself
  nowhere: numba's wraparound of a negative index, ``4*(i + ((i >> 63) & shape))``, adds the
  64-bit ``shape`` when ``i < 0``. Such a parameter may still carry a pointer difference
  (``out[idx[i] + off]`` with ``off = (in - out) / 4`` addresses ``in``), so the launch
  check bounds the access by ``P``'s allocation only when every value of ``T`` keeps
  ``P + T`` inside that allocation (its end included): the access is then ``(P + T) + I``,
  an index from a pointer into ``P``'s object, and the in-bounds assumption applies to it
  as to ``P + I``. Otherwise its bytes are unknown (:mod:`kernelcheck.launch.evaluate`).
* :func:`module_base`: whether the access lies in a module-scope ``.global`` variable
  (``&table + 4*k``: libdevice's trigonometric tables). Its address is fixed when the
  module is loaded and unknown to the launch check, but the variable is an object of the
  module's own memory, outside every allocation of the allocation table; under the same
  in-bounds assumption the access stays in it, so it shares no byte with an access whose
  bytes are known to lie inside allocations.
"""

from __future__ import annotations

from functools import cache

from kernelcheck.analysis.terms import (
    Add,
    Bound,
    Const,
    Global,
    Iter,
    Join,
    Mul,
    NotEq,
    Opaque,
    Param,
    Special,
    Term,
    TripMax,
    Wrap,
    add,
    children,
    mul,
)

__all__ = ["base_param", "narrowing_base", "rebased_base", "module_base", "index_valued",
           "split_base", "forget_parts"]


def _flat(term: Term) -> tuple[Term, ...]:
    return term.args if type(term) is Add else (term,)


def _pull(term: Term, memo: dict | None = None) -> tuple[Param, Term] | None:
    """``(P, R)`` with ``term = P + R`` for one pointer-wide parameter ``P``: a summand of a
    sum, or of every candidate of a ``Join`` (``one of(P + x, P + y) = P + one of(x, y)``,
    recursively).

    ``memo`` holds, by ``id``, each sum and join already seen with its answer (and the
    term, so the ``id`` is not reused while ``memo`` lives): candidates of a join share
    their sub-terms (paths merged one after the other), and following every path through
    them takes time exponential in their depth.
    """
    kind = type(term)
    if kind is Param:
        return (term, Const(0)) if term.size == 8 else None
    if kind is not Add and kind is not Join:
        return None
    if memo is None:
        memo = {}
    seen = memo.get(id(term))
    if seen is not None:
        return seen[1]
    if kind is Add:
        found = [(k, _pull(a, memo)) for k, a in enumerate(term.args)
                 if type(a) in (Param, Join)]
        found = [(k, r) for k, r in found if r is not None]
        if len(found) != 1:
            result = None
        else:
            k, (base, rest) = found[0]
            result = base, add(*term.args[:k], rest, *term.args[k + 1:])
    else:
        pulled = [_pull(a, memo) for a in term.args]
        if any(r is None for r in pulled) or len({r[0] for r in pulled}) != 1:
            result = None
        else:
            result = pulled[0][0], Join(tuple(r[1] for r in pulled))
    memo[id(term)] = (term, result)
    return result


def _summands(address: Term) -> tuple[Term, ...]:
    """The summands of ``address`` (under its 64-bit wrap), with a pointer parameter that
    every candidate of a ``Join`` holds pulled out of it (:func:`_pull`)."""
    inner = address.arg if type(address) is Wrap else address
    pulled = _pull(inner)
    if pulled is None:
        return _flat(inner)
    return (pulled[0],) + _flat(pulled[1])


def split_base(address: Term) -> tuple[Param, Term] | None:
    """``(P, R)`` with ``address = Wrap(P + R)``, ``P`` the one 64-bit Param summand."""
    parts = list(_summands(address))
    found = [p for p in parts if type(p) is Param and p.size == 8]
    if len(found) != 1:
        return None
    parts.remove(found[0])
    return found[0], add(*parts)


def base_param(address: Term) -> Param | None:
    """The pointer parameter an address is named after: its one 64-bit Param summand.

    Examples
    --------
    >>> from kernelcheck.analysis.terms import add, mul
    >>> base_param(add(Param("out", 0, 8), mul(Const(4), Special("%tid.x")))).name
    'out'
    """
    found = [p for p in _summands(address) if type(p) is Param and p.size == 8]
    return found[0] if len(found) == 1 else None


def narrowing_base(address: Term) -> Param | None:
    """The parameter whose allocation may bound ``address`` at launch (module notes), or
    ``None`` when the in-bounds assumption cannot be tied to one base pointer.

    Examples
    --------
    >>> from kernelcheck.analysis.terms import add, mul, wrap
    >>> out, inp = Param("out", 0, 8), Param("in", 8, 8)
    >>> idx = Opaque("ld@3", 64, memory=True)
    >>> narrowing_base(add(out, mul(Const(4), wrap(idx, 32, True)))).name
    'out'
    >>> narrowing_base(add(out, Opaque("shf@9", 64))) is None   # unmodelled arithmetic
    True
    >>> narrowing_base(add(out, mul(Const(4), inp), mul(Const(-4), out))) is None
    True
    """
    parts = list(_summands(address))
    base = base_param(address)
    if base is None:
        return None
    parts.remove(base)
    return base if all(index_valued(p) for p in parts) else None


def _spread(term: Term) -> tuple[Term, ...]:
    """The summands of ``term``, with a constant factor distributed over a sum
    (``4*(a + b)`` gives ``4*a`` and ``4*b``)."""
    out: list[Term] = []
    stack = [term]
    while stack:
        t = stack.pop()
        if type(t) is Add:
            stack.extend(t.args)
        elif (type(t) is Mul and len(t.args) == 2 and type(t.args[0]) is Const
              and type(t.args[1]) is Add):
            stack.extend(mul(t.args[0], a) for a in t.args[1].args)
        else:
            out.append(t)
    return tuple(out)


def rebased_base(address: Term) -> tuple[Param, Term] | None:
    """``(P, T)`` when ``address`` is ``P + T + I`` with ``I`` index-valued and ``T`` holding
    other pointer-wide parameters only as indices (module notes), ``T`` not zero; ``None``
    otherwise (and where :func:`narrowing_base` already ties the access to ``P``).

    The launch check may bound the access by ``P``'s allocation only once every value of
    ``T`` keeps ``P + T`` inside it.

    Examples
    --------
    >>> from kernelcheck.analysis.terms import BitAnd, Shr, render, wrap
    >>> out, shape = Param("out", 0, 8), Param("shape", 8, 8)
    >>> i = wrap(Opaque("ld@3", 64, memory=True), 64, True)
    >>> base, t = rebased_base(add(out, mul(Const(4), add(i, BitAnd(wrap(Shr(i, 63), 64,
    ...     False), shape)))))
    >>> base.name, "shape" in render(t), "ld@3" in render(t)
    ('out', True, True)
    >>> rebased_base(add(out, shape, mul(Const(4), i))) is None      # unscaled: a rebase
    True
    >>> rebased_base(add(out, mul(Const(4), add(shape, mul(Const(-1), out))))) is None
    True
    """
    if narrowing_base(address) is not None:
        return None
    split = split_base(address)
    if split is None:
        return None
    base, rest = split
    moved: list[Term] = []
    for part in _spread(rest):
        if _index_part(part, None):
            continue
        if not _index_part(part, base):
            return None
        moved.append(part)
    return (base, add(*moved)) if moved else None


@cache
def _index_part(part: Term, base: Param | None) -> bool:
    """:func:`index_valued` of a part of an address, by the part's value: the accesses of a
    kernel share most of their parts, which :func:`_spread` builds anew for each (an
    index-flattening kernel asks 62,690 times about 1,556 parts). Emptied by
    :func:`forget_parts` between kernels."""
    return index_valued(part, base=base)


def forget_parts() -> None:
    """Drop the answers :func:`rebased_base` keeps about the parts of addresses (they hold
    one kernel's terms)."""
    _index_part.cache_clear()


def module_base(address: Term) -> Global | None:
    """The module variable an access lies in: ``&v + R`` with ``R`` an index (the same
    in-bounds assumption, applied to the object ``v``), or ``None``.

    >>> from kernelcheck.analysis.terms import add, mul
    >>> module_base(add(Global("table"), mul(Const(4), Special("%tid.x")))).name
    'table'
    """
    parts = list(_summands(address))
    found = [p for p in parts if type(p) is Global]
    if len(found) != 1 or base_param(address) is not None:
        return None
    parts.remove(found[0])
    return found[0] if all(index_valued(p) for p in parts) else None


def index_valued(term: Term, scaled: bool = False, base: Param | None = None) -> bool:
    """Whether no value of ``term`` can carry a pointer (see the module notes).

    ``scaled``: the term is multiplied by a constant of magnitude two or more, or narrowed
    to 32 bits or fewer, on its way into the address, so a loaded 64-bit value in it is an
    index, not a pointer.

    ``base``: given, a pointer-wide parameter other than ``base`` is let through where it
    is scaled (``base`` itself never is). Such a parameter may still hold a pointer
    difference: only :func:`rebased_base` asks this, for a part of the address the launch
    checks (module notes).
    """
    stack = [(term, scaled)]
    # Each (node, scaled) once: the terms are graphs with shared sub-terms, and a walk of
    # every path through an unrolled computation is exponential in its depth.
    seen: set[tuple[int, bool]] = set()
    while stack:
        t, sc = stack.pop()
        key = (id(t), sc)
        if key in seen:
            continue
        seen.add(key)
        kind = type(t)
        if kind in (Const, Special, Iter, TripMax):
            continue  # launch constants, thread indices and iteration counts: integers
        if kind is Param:
            if t.size >= 8 and (not sc or base is None or t.offset == base.offset):
                return False
            continue
        if kind is Opaque:
            if not t.memory or (t.bits > 32 and not sc):
                return False
            continue
        if kind is Wrap:
            stack.append((t.arg, sc or t.bits <= 32))
            continue
        if kind is Mul:
            big = any(type(a) is Const and abs(a.value) >= 2 for a in t.args)
            stack.extend((a, sc or big) for a in t.args)
            continue
        if kind in (Bound, NotEq):
            stack.append((t.arg, sc))  # facts bound the value; they add nothing to it
            continue
        kids = children(t)
        if not kids:
            return False  # LoopVar and anything else without known provenance
        stack.extend((k, sc) for k in kids)
    return True
