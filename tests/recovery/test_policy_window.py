"""Save plans from verdicts, and replay windows over launch logs."""

from __future__ import annotations

import pytest

from kernelcheck.analysis.intervals import IntervalSet as S
from kernelcheck.recovery.footprint import Footprint
from kernelcheck.recovery.policy import RecoveryConfig, plan_launch
from kernelcheck.recovery.window import WindowEntry, replay_window, window_violations

ALLOCS = ((0, 64), (64, 64), (128, 64))
EVERY = S([(0, 192)])
ALLOCS_AS_RANGES = ((0, 64), (64, 128), (128, 192))   # one piece per allocation


def test_idempotent_instance_saves_nothing():
    fp = Footprint(S([(64, 128)]), S([(0, 64)]), S())
    plan = plan_launch("idempotent", fp, ALLOCS, ((0, 64),))
    assert plan.ranges == () and plan.replayable


def test_clobbering_instance_saves_exactly_its_clobbered_bytes():
    fp = Footprint(S([(0, 64)]), S([(0, 64)]), S([(8, 16)]))
    plan = plan_launch("not_idempotent", fp, ALLOCS, ((0, 64),))
    assert plan.ranges == ((8, 16),) and plan.mode == "clobbered"


def test_not_proven_instance_saves_the_allocations_it_may_write():
    fp = Footprint(None, None, None)
    plan = plan_launch("not_proven", fp, ALLOCS, ((64, 64),))
    assert plan.ranges == ((64, 128),) and plan.mode == "written_allocations"
    every = plan_launch("not_proven", fp, ALLOCS, None)
    assert every.ranges == ALLOCS_AS_RANGES and every.mode == "all_allocations"


def test_not_idempotent_without_complete_clobbered_set_is_treated_as_not_proven():
    fp = Footprint(S([(0, 8)]), None, None)
    plan = plan_launch("not_idempotent", fp, ALLOCS, ((0, 64),))
    assert plan.mode == "written_allocations"


def test_not_proven_can_be_configured_unrecoverable():
    plan = plan_launch("not_proven", Footprint(None, None, None), ALLOCS, None,
                       RecoveryConfig(not_proven="unrecoverable"))
    assert not plan.replayable and plan.nbytes == 0


def test_window_saves_cover_bytes_earlier_launches_read():
    fp = Footprint(S([(64, 72)]), S([(0, 8)]), S())
    plan = plan_launch("idempotent", fp, ALLOCS, ((0, 64),), pending_reads=S([(4, 6)]))
    assert plan.ranges == ((4, 6),)
    off = plan_launch("idempotent", fp, ALLOCS, ((0, 64),), RecoveryConfig(window_saves=False),
                      pending_reads=S([(4, 6)]))
    assert off.ranges == ()


def test_bad_config_is_rejected():
    with pytest.raises(ValueError, match="not_proven"):
        RecoveryConfig(not_proven="guess")


def test_window_extends_back_to_the_launch_that_saved_a_byte():
    a, b, c = S([(0, 8)]), S([(64, 72)]), S([(128, 136)])
    log = [WindowEntry(reads=a, writes=a, saved=a),     # a = a + 1 (saves a)
           WindowEntry(reads=a, writes=b, saved=S()),   # b = f(a)
           WindowEntry(reads=c, writes=a, saved=S())]   # a = g(c): overwrites what 1 read
    assert window_violations(log, 1, EVERY) == ((1, a),)
    assert replay_window(log, 1, EVERY) == 0
    assert replay_window(log, 2, EVERY) == 2


def test_unknown_footprint_or_unreplayable_launch_blocks_the_window():
    a = S([(0, 8)])
    log = [WindowEntry(reads=a, writes=S([(64, 72)]), saved=S()),
           WindowEntry(reads=None, writes=None, saved=S())]
    assert replay_window(log, 0, EVERY) is None
    log[1] = WindowEntry(reads=None, writes=None, saved=EVERY)
    assert replay_window(log, 0, EVERY) == 0      # saved before anything overwrote it
    log.insert(1, WindowEntry(reads=S(), writes=a, saved=S()))
    assert replay_window(log, 0, EVERY) is None   # launch 1 overwrote a before the save
    assert replay_window(log, 2, EVERY) == 2
    log[2] = WindowEntry(reads=a, writes=a, saved=a, replayable=False)
    assert replay_window(log, 2, EVERY) is None


def test_saved_ranges_never_span_two_allocations_or_leave_them():
    fp = Footprint(S([(0, 300)]), S([(0, 300)]), S([(32, 300)]))
    plan = plan_launch("not_idempotent", fp, ALLOCS, ((0, 64),))
    assert plan.ranges == ((32, 64), (64, 128), (128, 192))
