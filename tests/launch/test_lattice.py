"""The exact lattice test against brute-force enumeration over small ranges."""

import itertools

from hypothesis import example, given
from hypothesis import strategies as st

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
