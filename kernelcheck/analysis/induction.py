"""Induction variables that move in step with the one a loop's exit test bounds.

A loop often keeps several induction variables: the index its exit test compares (``i``,
bounded by ``i < n``) and pointers advanced beside it (``p += 8*stride`` while ``i +=
stride``). :mod:`kernelcheck.analysis.symbolic` gives the tested variable a *cap*: in every
iteration that runs, its value lies below the bound. The other variables only know their
first value and their step, so their ranges come from the iteration count, which interval
arithmetic over a thread-dependent first value overestimates (the dependency problem):
the pointer's range grows by a whole stride per thread beyond ``n``.

:func:`derived_value` expresses such a variable through the tested one. With
``p(k) = p0 + c*s*k`` and ``i(k) = i0 + s*k`` for one integer ``c``,
``p(k) = (p0 - c*i0) + c*i(k)`` for every ``k``: an identity of terms, so it holds modulo
``2**64`` like every term (:mod:`kernelcheck.analysis.terms`). It is used only when
``p0 - c*i0`` cancels to a launch constant (``in + 8*i0 - 8*i0 = in``), so the pointer is
the launch-constant base plus ``c`` times the capped index: ``in + 8*i`` with
``i <= n - 1``, exact where the first form was not.
"""

from __future__ import annotations

from kernelcheck.analysis.terms import (
    Add,
    Const,
    Mul,
    Term,
    add,
    is_launch_constant,
    mul,
    render,
)

__all__ = ["linear", "from_linear", "derived_value"]


def linear(term: Term) -> dict[Term, int]:
    """``term`` as ``{monomial: integer coefficient}`` (``Const(1)`` for the constant).

    Sums are flattened and constant factors distributed over them, so equal monomials
    reached along different paths combine (``8*x - 8*x`` is nothing).

    >>> from kernelcheck.analysis.terms import Special
    >>> x = Special("%tid.x")
    >>> linear(add(mul(Const(8), x), mul(Const(-8), x), Const(3)))
    {Const(value=1): 3}
    """
    out: dict[Term, int] = {}
    stack = [(term, 1)]
    while stack:
        t, k = stack.pop()
        if type(t) is Const:
            out[Const(1)] = out.get(Const(1), 0) + k * t.value
        elif type(t) is Add:
            stack.extend((a, k) for a in t.args)
        elif type(t) is Mul and type(t.args[0]) is Const:
            rest = t.args[1:]
            stack.append((rest[0] if len(rest) == 1 else Mul(rest), k * t.args[0].value))
        else:
            out[t] = out.get(t, 0) + k
    return {m: c for m, c in out.items() if c}


def from_linear(form: dict[Term, int]) -> Term:
    """The term of a :func:`linear` form.

    The monomials are ordered by their rendered text (memoised per subterm and cut at
    :data:`~kernelcheck.analysis.terms.RENDER_LIMIT`), never by ``repr``: a term that shares
    subterms prints in time exponential in its depth.
    """
    memo: dict = {}
    return add(*(Const(c) if type(m) is Const else mul(Const(c), m)
                 for m, c in sorted(form.items(), key=lambda mc: render(mc[0], memo=memo))))


def _ratio(step: dict, tested: dict) -> int | None:
    """``c`` with ``step == c * tested`` as linear forms, or ``None``."""
    if not tested or set(step) != set(tested):
        return None
    m = next(iter(tested))
    c, r = divmod(step[m], tested[m])
    if r or not c:
        return None
    return c if all(step[x] == c * tested[x] for x in tested) else None


def derived_value(init: Term, step: Term, tested_init: Term, tested_step: Term,
                  tested_value: Term) -> Term | None:
    """``base + c*tested_value`` for an induction variable ``init + step*k`` whose step is
    ``c`` times the tested one's, when ``base = init - c*tested_init`` is a launch constant;
    else ``None``.

    ``tested_value`` is the tested variable's value in iteration ``k`` (its capped form).

    >>> from kernelcheck.analysis.terms import Param, Special, render
    >>> i0, s = Special("%tid.x"), Special("%ntid.x")
    >>> p0 = add(Param("in", 0, 8), mul(Const(8), i0))
    >>> render(derived_value(p0, mul(Const(8), s), i0, s, Special("i")))
    'in + 8*i'
    """
    c = _ratio(linear(step), linear(tested_step))
    if c is None:
        return None
    base = linear(init)
    for m, k in linear(tested_init).items():
        base[m] = base.get(m, 0) - c * k
    base_term = from_linear({m: k for m, k in base.items() if k})
    if not is_launch_constant(base_term):
        return None
    return add(base_term, mul(Const(c), tested_value))
