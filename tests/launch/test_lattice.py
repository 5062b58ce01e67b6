"""The exact lattice test against brute-force enumeration over small ranges."""

import itertools

from hypothesis import example, given
from hypothesis import strategies as st

from kernelcheck.launch.compiled import _lattice_sym
from kernelcheck.launch.evaluate import lattice_may_overlap

term = st.tuples(st.integers(-12, 12), st.integers(-4, 4), st.integers(0, 5)).map(
    lambda t: (t[0], t[1], t[1] + t[2]))


@given(st.integers(-40, 40), st.lists(term, max_size=3), st.integers(1, 8), st.integers(1, 8))
@example(4, [(8, 0, 3), (-8, 0, 3)], 4, 4)
def test_never_disjoint_when_brute_force_overlaps(d, terms, ww, wr):
    lo, hi = -(ww - 1), wr - 1
    brute = any(lo <= d + sum(s * z for (s, _, _), z in zip(terms, zs, strict=True)) <= hi
                for zs in itertools.product(*(range(a, b + 1) for _, a, b in terms)))
    answer = lattice_may_overlap(d, terms, lo, hi)
    if brute:
        assert answer
    else:
        assert not answer  # the test is exact within its budget on small ranges


@given(st.integers(-200, 200), st.integers(-12, 12), st.integers(-6, 6), st.integers(0, 9),
       st.integers(1, 8), st.integers(1, 8))
def test_closed_form_of_equal_atoms_is_the_lattice_answer(d, c, zlo, span, ww, wr):
    lo, hi = -(ww - 1), wr - 1
    expected = lattice_may_overlap(d, [(c, zlo, zlo + span), (-c, zlo, zlo + span)], lo, hi)
    assert _lattice_sym(d, c, span, lo, hi) == expected


multiple = st.tuples(st.integers(1, 6), st.integers(1, 5), st.integers(-3, 3),
                     st.integers(0, 6))


@given(st.integers(-150, 150), st.lists(multiple, min_size=2, max_size=3), st.integers(1, 8))
def test_folded_multiples_are_exact(d, nested, width):
    # s*x + s*k*y + ...: strides that divide one another, as grid-stride and unrolled loops
    # produce; folding them must keep the answer exact.
    terms, s = [], 1
    for base, k, zlo, span in nested:
        s = s * k if terms else base
        terms.append((s, zlo, zlo + span))
    lo, hi = -(width - 1), width - 1
    brute = any(lo <= d + sum(c * z for (c, _, _), z in zip(terms, zs, strict=True)) <= hi
                for zs in itertools.product(*(range(a, b + 1) for _, a, b in terms)))
    assert lattice_may_overlap(d, terms, lo, hi) == brute

