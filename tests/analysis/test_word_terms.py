"""Terms of 64-bit values the SASS lift computes in 32-bit halves
(kernelcheck.analysis.terms, semantics, lower, unroll): each rewrite is an identity, checked
here on values, and the shapes it produces are the ones the analysis needs."""

from __future__ import annotations

import itertools

from kernelcheck.analysis.lower import apply_guards
from kernelcheck.analysis.semantics import shift_right
from kernelcheck.analysis.terms import (
    Bound,
    Cmp,
    Const,
    Param,
    Shr,
    Special,
    Wrap,
    add,
    contains,
    mul,
    neg,
    rejoin_words,
    wrap,
)
from kernelcheck.analysis.unroll import prove_equal_under

TID, NTID, CTAID, NCTAID = (Special(n) for n in ("%tid.x", "%ntid.x", "%ctaid.x",
                                                 "%nctaid.x"))


def test_sums_and_products_of_launch_coordinates_keep_no_wrap():
    assert wrap(mul(NTID, NCTAID), 64, False) == mul(NTID, NCTAID)
    assert wrap(add(CTAID, NCTAID), 32, False) == add(CTAID, NCTAID)
    # 2**31 - 2 + 2**31 - 1 does not fit a signed 32-bit value: the wrap stays.
    assert type(wrap(add(CTAID, NCTAID), 32, True)) is Wrap
    # A parameter is not a launch coordinate.
    assert type(wrap(mul(NTID, Param("n", 0, 4)), 64, False)) is Wrap


def test_the_high_word_of_a_launch_coordinate_sum_is_zero():
    assert shift_right(add(CTAID, NCTAID), 32) == Const(0)
    assert shift_right(mul(NTID, NCTAID), 32) == Shr(mul(NTID, NCTAID), 32)


def _not_halves(x):
    lo = wrap(add(neg(x), Const(-1)), 32, False)
    hi = wrap(add(neg(Shr(x, 32)), Const(-1)), 32, False)
    return add(lo, mul(Const(1 << 32), hi))


def test_the_halves_of_a_complement_rejoin():
    x = add(mul(add(CTAID, NCTAID), NTID), TID)
    assert rejoin_words(add(Param("n", 0, 8), _not_halves(x))) == add(
        wrap(add(neg(x), Const(-1)), 64, False), Param("n", 0, 8))


def test_the_complement_identity_holds_on_values():
    for value in itertools.chain(range(0, 5), (2**32 - 1, 2**32, 2**40 + 7, 2**64 - 1)):
        lo = (-value - 1) % 2**32
        hi = (-(value >> 32) - 1) % 2**32
        assert lo + 2**32 * hi == (-value - 1) % 2**64


def _halves(value):
    whole = wrap(value, 64, False)
    return wrap(value, 32, False), mul(Const(1 << 32), wrap(Shr(whole, 32), 32, False))


def test_a_long_sum_rejoins_each_value_with_its_own_high_word():
    # Indices times strides of eight dimensions, each 64-bit value split into halves, the
    # halves in no particular order among other summands (an unrolled offset calculator).
    values = [mul(Param(f"i{k}", 8 * k, 8), Param(f"s{k}", 64 + 8 * k, 8)) for k in range(8)]
    x = add(mul(add(CTAID, NCTAID), NTID), TID)
    lows, highs = zip(*(_halves(v) for v in values), strict=True)
    complement_lo, complement_hi = _not_halves(x).args
    others = [Param("base", 128, 8), mul(Const(4), TID)]
    summands = [*highs[::-1], complement_hi, *others, *lows, complement_lo]
    joined = rejoin_words(add(*summands))
    expected = [*(wrap(v, 64, False) for v in values),
                wrap(add(neg(x), Const(-1)), 64, False), *others]
    assert sorted(map(repr, joined.args)) == sorted(map(repr, expected))
    # A low word whose high word is missing stays as it is.
    partial = rejoin_words(add(lows[0], highs[1], others[0]))
    assert partial == add(lows[0], highs[1], others[0])


def test_halves_of_a_value_that_may_pass_64_bits_do_not_rejoin():
    x = add(Param("n", 0, 8), Const(5))  # an unwrapped sum that may reach 2**64
    joined = rejoin_words(_not_halves(x))
    assert contains(joined, lambda t: type(t) is Shr)


def test_a_guard_on_a_shifted_launch_coordinate_bounds_the_coordinate():
    guard = (Cmp("lt", add(TID, Const(4)), Param("n", 8, 4)),)
    guarded = apply_guards(add(Param("p", 0, 8), TID), guard)
    assert contains(guarded, lambda t: type(t) is Bound)


def test_wraps_inside_a_wider_wrap_are_congruent():
    # w64(w64(-x - 1) + n) == w64(n - x - 1): the inner wrap changes nothing mod 2**64.
    x, n = Param("x", 0, 8), Param("n", 8, 8)
    inner = add(wrap(add(neg(x), Const(-1)), 64, False), n)
    assert prove_equal_under([], wrap(inner, 64, False),
                             wrap(add(n, neg(x), Const(-1)), 64, False))


def test_wrap_reduces_exactly_the_sums_that_have_a_multiple_to_drop():
    """The test that spares ``wrap`` rebuilding a sum agrees with the rebuild on every
    shape of sums and products two levels deep: a sum is rebuilt exactly when a summand
    (at any of those levels) is a multiple of the modulus."""
    import random

    from kernelcheck.analysis import terms

    rng = random.Random(18)
    leaves = [Param("p", 0, 4), Param("q", 8, 8), TID, CTAID, Const(3), Const(1 << 32),
              Const(5 << 32), mul(Const(1 << 32), Param("h", 16, 4)),
              mul(Const(6), Param("k", 20, 4))]

    def draw(depth):
        if depth == 0 or rng.random() < 0.3:
            return rng.choice(leaves)
        args = [draw(depth - 1) for _ in range(rng.randint(2, 3))]
        return add(*args) if rng.random() < 0.6 else mul(*args)

    reducible = 0
    for _ in range(2000):
        term = draw(4)
        for modulus in (1 << 32, 1 << 16):
            changed = terms._modulo(term, modulus, 2) is not term
            assert terms._reducible(term, modulus, 2) == changed, term
            reducible += changed
    assert reducible > 100  # the draw reaches both answers
