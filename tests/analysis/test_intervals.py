"""IntervalSet against Python sets as the model."""

import pickle

from hypothesis import given
from hypothesis import strategies as st

from kernelcheck.analysis.intervals import DeferredIntervalSet, IntervalSet

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


def test_a_deferred_set_computes_once_and_equals_the_eager_set():
    calls = []

    def compute(a, b):
        calls.append((a, b))
        return [(b, b + 4), (a, a + 4), (a + 2, a + 6)]

    deferred = DeferredIntervalSet(compute, 0, 16)
    assert calls == []
    eager = IntervalSet([(0, 6), (16, 20)])
    assert deferred == eager and hash(deferred) == hash(eager)
    assert len(deferred) == 10 and 17 in deferred and 8 not in deferred
    assert (deferred & IntervalSet([(4, 18)])).ranges == ((4, 6), (16, 18))
    assert calls == [(0, 16)]
    copied = pickle.loads(pickle.dumps(DeferredIntervalSet(compute, 1, 9)))
    assert type(copied) is IntervalSet and copied.ranges == ((1, 7), (9, 13))


def test_single_is_the_normalized_one_range_set():
    assert IntervalSet.single(4, 8) == IntervalSet([(4, 8)])
    assert IntervalSet.single(8, 8) == IntervalSet() and not IntervalSet.single(9, 3)
