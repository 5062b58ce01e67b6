"""Saved bytes of accesses whose offset adds a 64-bit integer parameter: numba's histogram.

numba indexes ``counts[bins[i]]`` as ``counts + 4*(b + ((b >> 63) & shape))`` (the
wraparound of a negative index). The atomic's address depends on the loaded ``b``, so only
the allocation of ``counts`` bounds it, and the offset holds the 64-bit ``shape``: the
launch check bounds it by that allocation once ``counts + 4*shape`` lies inside it
(``rebase_slot``). Recovery then saves the 256 bytes of ``counts`` (the floor the emulator
oracle measures), not every allocation, in Python and in the C shim; the same integer set
to a pointer difference leaves the bytes unknown, and the plan saves every allocation.
"""

from __future__ import annotations

import pytest

from kernelcheck.analysis.intervals import IntervalSet
from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.emu.emulator import pack_params
from kernelcheck.faults.campaign import Campaign
from kernelcheck.faults.targets import expected_kernels, load_target
from kernelcheck.recovery import EmulatorDevice, RecoveryConfig, RecoverySession
from kernelcheck.recovery.footprint import instance_footprint, written_allocations
from kernelcheck.recovery.policy import ALL_ALLOCATIONS, plan_launch
from kernelcheck.recovery.session import KernelModule
from tests.launch.test_assumptions import BASE, SCATTER_OFF, _check, _params

HISTOGRAM = next(k for k in expected_kernels() if "histogram_numba" in k)


def _launch(t, config=None):
    device = EmulatorDevice(t.emu, trace=True)
    session = RecoverySession(device, config)
    record = session.launch(KernelModule(t.module, t.program), t.entry, grid=t.grid,
                            block=t.block, params=t.values, shared_bytes=t.shared_bytes)
    saved = IntervalSet(session._log[0].plan.ranges)
    session.synchronize()
    return device, record, saved


@pytest.mark.parametrize("disjoint", [False, True])
def test_numba_histogram_saves_its_counts_not_every_allocation(disjoint):
    t = load_target(HISTOGRAM, 0, disjoint=disjoint)
    counts = t.values[4]
    (alloc,) = [(b, s) for b, s in t.allocations if b <= counts < b + s]
    device, record, saved = _launch(t)
    clobbered = IntervalSet(device.traces[0].clobbered.ranges)
    assert record.plan_mode == "clobbered"
    assert saved == IntervalSet(((alloc[0], alloc[0] + alloc[1]),))
    assert not clobbered - saved and record.floor_missed_bytes == 0
    assert record.saved_bytes == record.floor_bytes == 256


@pytest.mark.parametrize("disjoint", [False, True])
def test_the_c_shim_plans_the_same_histogram_bytes(disjoint):
    from kernelcheck.shim.native import native_ranges

    t = load_target(HISTOGRAM, 0, disjoint=disjoint)
    function = t.module.get_function(t.entry)
    check = analyze_kernel(t.module, function).launch_check
    params = pack_params(function, t.values).tobytes()
    python = instance_footprint(check, params, t.grid, t.block, t.allocations,
                                sharp=False).clobbered
    native = native_ranges(check.to_bytes(), params, t.grid, t.block, t.allocations)
    assert python is not None and native is not None
    assert IntervalSet(native) == python and len(python) == 256


def test_injected_faults_in_the_histogram_are_recovered_byte_exactly():
    config = RecoveryConfig(redundant="replayable", write_guard=True,
                            indirect_write_saves=True)
    campaign = Campaign([(HISTOGRAM, 0, False), (HISTOGRAM, 0, True)], config)
    rows = []
    for model, groups in (("launch-fail", ["-"]), ("single", ["G_GP"]), ("store", ["-"]),
                          ("single", ["G_LD"])):
        rows += campaign.run(16, 2026, model, groups)
    detected = [r for r in rows if r.detected_by]
    assert len(detected) >= 20
    assert all(r.recovered_outcome == "recovered" for r in detected)
    assert {r.plan for r in detected} == {"clobbered"}


def test_an_integer_offset_that_leaves_the_allocation_saves_every_allocation():
    # out[idx[i] + off] = in[i] with off = (in - out) / 4: every store lands in in, which
    # out's allocation must not be taken to bound.
    from kernelcheck.shim.native import native_ranges

    check = _check(SCATTER_OFF, "scatter_off")
    out, inp, idx = BASE, BASE + 0x100000, BASE + 0x300000
    allocations = [(out, 0x200), (inp, 0x1000), (idx, 0x1000)]
    params = _params((out, 8), (inp, 8), (idx, 8), ((inp - out) // 4, 8))
    grid, block = (1, 1, 1), (64, 1, 1)
    footprint = instance_footprint(check, params, grid, block, allocations)
    assert footprint.writes is None
    assert native_ranges(check.to_bytes(), params, grid, block, allocations,
                         "writes") is None
    written = written_allocations(check, params, allocations, footprint)
    assert written is None
    plan = plan_launch("not_proven", footprint, allocations, written)
    assert plan.mode == ALL_ALLOCATIONS
    assert not IntervalSet(((inp, inp + 0x1000),)) - IntervalSet(plan.ranges)
    # off = 16 keeps out + 4*off inside out's allocation: the stores stay in it
    params = _params((out, 8), (inp, 8), (idx, 8), (16, 8))
    footprint = instance_footprint(check, params, grid, block, allocations)
    assert footprint.writes == IntervalSet(((out, out + 0x200),))
    assert native_ranges(check.to_bytes(), params, grid, block, allocations,
                         "writes") == ((out, out + 0x200),)
