"""Guards attached to address terms (kernelcheck.analysis.lower)."""

from __future__ import annotations

from kernelcheck.analysis.lower import apply_guards
from kernelcheck.analysis.terms import (
    Bound,
    Cmp,
    Const,
    Param,
    Special,
    add,
    contains,
    mul,
    wrap,
)


def test_bound_on_a_shifted_special_register_bounds_the_register():
    # ``%tid.x + 1 < n`` bounds ``%tid.x``; the register fits 32 bits, so its wrap
    # simplifies away and the shifted bound must take the width from the guard's term.
    tid = Special("%tid.x")
    guard = (Cmp("lt", wrap(add(tid, Const(1)), 32, False), Param("n", 8, 4)),)
    guarded = apply_guards(add(Param("p", 0, 8), tid), guard)
    assert contains(guarded, lambda t: type(t) is Bound)


def test_bound_on_a_multiple_of_a_register_bounds_the_register():
    # ``4*tid < n`` (the entry test of a loop over tid, tid + ntid, ... with 16-byte
    # accesses) bounds ``tid`` by ``(n - 1) / 4`` wherever the address holds it alone.
    from kernelcheck.analysis.terms import Div, Join, mul

    tid = Special("%tid.x")
    n = Param("n", 8, 4)
    guard = (Cmp("lt", mul(Const(4), tid), n),)
    address = add(Param("p", 0, 8), mul(Const(16), Join((tid, add(tid, Special("%ntid.x"))))))
    guarded = apply_guards(address, guard)
    assert contains(guarded, lambda t: type(t) is Bound and t.arg == tid and type(t.hi) is Div)


def test_a_sub_term_no_fact_applies_to_is_kept_itself():
    # The accesses of a kernel share sub-terms; guarded addresses share them too wherever
    # no guard fact applies, so later walks (lowering, occurrence tests) meet them once.
    tid = Special("%tid.x")
    shared = mul(Const(4), Param("m", 8, 4))
    address = add(Param("p", 0, 8), wrap(tid, 64, False), shared)
    guard = (Cmp("lt", tid, Param("n", 16, 4)),)
    guarded = apply_guards(address, guard)
    assert guarded != address
    assert any(arg is shared for arg in guarded.args)
    assert apply_guards(shared, guard) is shared
    assert contains(guarded, lambda t: type(t) is Bound)
