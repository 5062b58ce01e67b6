"""IntervalSet against Python sets as the model."""

from hypothesis import given
from hypothesis import strategies as st

from kernelcheck.analysis.intervals import IntervalSet

ranges = st.lists(st.tuples(st.integers(-20, 20), st.integers(0, 8)).map(
    lambda p: (p[0], p[0] + p[1])), max_size=6)


def model(rs):
    return {x for a, b in rs for x in range(a, b)}


@given(ranges, ranges)
def test_algebra_matches_sets(a, b):
    sa, sb = IntervalSet(a), IntervalSet(b)
    assert set(sa) == model(a)
    assert set(sa & sb) == model(a) & model(b)
    assert set(sa | sb) == model(a) | model(b)
    assert set(sa - sb) == model(a) - model(b)
    assert sa.isdisjoint(sb) == (not (model(a) & model(b)))
    assert len(sa) == len(model(a))


@given(ranges)
def test_normal_form_separates_ranges(a):
    rs = IntervalSet(a).ranges
    for (_, b), (c, _) in zip(rs, rs[1:], strict=False):
        assert b < c
