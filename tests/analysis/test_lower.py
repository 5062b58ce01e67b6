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


def _dtype_case(k: int) -> Cmp:
    return Cmp("eq", Param("dtype", 24, 4), Const(k))


def test_guards_differing_only_in_an_unrelated_literal_give_one_guarded_address():
    # A switch on a launch argument (the dtype dispatch of an elementwise kernel) reaches
    # the same address in every case; the case literal bounds nothing in it, so with one
    # cache the cases share one guarded address, equal to the one each guard gives alone.
    tid = Special("%tid.x")
    address = add(Param("p", 0, 8), mul(Const(4), wrap(tid, 64, False)))
    cache: dict = {}
    guarded = [apply_guards(address, (Cmp("lt", tid, Param("n", 16, 4)), _dtype_case(k)),
                            cache) for k in range(5)]
    assert all(g is guarded[0] for g in guarded)
    assert contains(guarded[0], lambda t: type(t) is Bound)
    for k, g in enumerate(guarded):
        assert g == apply_guards(address, (Cmp("lt", tid, Param("n", 16, 4)), _dtype_case(k)))


def test_a_guard_whose_facts_miss_the_address_rewrites_it_as_without_the_cache():
    # Any fact in the guard turns a parameter inside a wrap of its own width into its
    # signed wrap, whether or not a fact applies to the address; the shared cache must
    # give that same term, not the address unchanged.
    address = wrap(add(mul(Special("%ctaid.y"), Param("ld", 8, 4)), Const(-1)), 32, True)
    address = add(Param("p", 0, 8), mul(Const(2), address))
    guard = (Cmp("lt", Special("%tid.x"), Param("n", 16, 4)),)
    assert apply_guards(address, guard, {}) == apply_guards(address, guard)
    assert apply_guards(address, (), {}) is address


def test_a_literal_sharing_a_leaf_with_the_address_is_applied_with_the_cache():
    tid = Special("%tid.x")
    n = Param("n", 16, 4)
    address = add(Param("p", 0, 8), tid)
    guard = (_dtype_case(1), Cmp("lt", tid, n))
    assert apply_guards(address, guard, {}) == apply_guards(address, guard)
    assert contains(apply_guards(address, guard, {}), lambda t: type(t) is Bound)
