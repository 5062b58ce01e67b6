"""The recovery session on fixture instances: plans checked against the emulator oracle,
every detection mode, and replay windows over several launches."""

from __future__ import annotations

import numpy as np
import pytest

from kernelcheck.analysis.intervals import IntervalSet
from kernelcheck.emu.executor import BitFlip
from kernelcheck.faults.models import Fault, fault_launch
from kernelcheck.faults.targets import load_target
from kernelcheck.launch.evaluate import InstanceVerdict
from kernelcheck.recovery import Checksum, EmulatorDevice, RecoveryConfig, RecoverySession
from kernelcheck.recovery.session import KernelModule


def _run(kernel, number=0, disjoint=False, config=None, verdict=None, fault=None, **dev):
    t = load_target(kernel, number, disjoint=disjoint)
    t.emu.launch(t.program, t.entry, **t.launch_kwargs())
    golden = t.emu.memory.snapshot()
    t.reset()
    device = EmulatorDevice(t.emu, trace=True, **dev)
    session = RecoverySession(device, config, verdict=verdict)
    if fault is not None:
        device.arm(fault)
    record = session.launch(KernelModule(t.module, t.program), t.entry, grid=t.grid,
                            block=t.block, params=t.values, shared_bytes=t.shared_bytes)
    report = session.synchronize()
    return t, device, record, report, golden


@pytest.mark.parametrize("kernel,number,disjoint,mode", [
    ("vec_add", 0, True, "nothing"),                 # idempotent
    ("inplace_add_one", 0, False, "clobbered"),      # a[i] += 1
    ("vec_add", 1, False, "clobbered"),              # out aliases an input
    ("atomic_add_all", 0, False, "clobbered"),       # atomicAdd
    ("histogram256_global", 0, False, "clobbered"),
])
def test_plan_covers_the_oracle_clobbered_set(kernel, number, disjoint, mode):
    t, device, record, report, golden = _run(kernel, number, disjoint)
    trace = device.traces[0]
    assert record.plan_mode == mode
    if mode == "clobbered":
        assert record.saved_bytes >= trace.clobbered.size > 0
    assert report.detections == () and t.emu.memory.snapshot() == golden


def test_register_flip_in_idempotent_instance_is_caught_by_redundant_execution():
    t0 = load_target("saxpy", 0, disjoint=True)
    fma = next(i.index for i in t0.program.function("saxpy").function.instructions
               if i.opcode == "fma")
    flip = BitFlip(fma, (1, 0, 0), (3, 0, 0), 1 << 30)
    t, _, record, report, golden = _run("saxpy", disjoint=True,
                                        fault=lambda e, p, k, kw: e.launch(p, k, inject=flip,
                                                                           **kw))
    assert record.verdict == "idempotent" and record.saved_bytes == 0
    assert [d.kind for d in report.detections] == ["redundant"]
    assert report.replays[0].succeeded and t.emu.memory.snapshot() == golden


def test_launch_failure_in_clobbering_instance_is_replayed_from_saved_bytes():
    fault = fault_launch(Fault("launch-fail", steps=7))
    t, _, record, report, golden = _run("inplace_add_one", fault=fault)
    assert record.plan_mode == "clobbered"
    assert [d.kind for d in report.detections] == ["device_error"]
    assert report.replays[0].launches == (0,) and report.all_recovered
    assert t.emu.memory.snapshot() == golden


def test_not_proven_instance_saves_the_allocations_it_writes_and_recovers():
    def not_proven(check, function, params, grid, block, allocations):
        return InstanceVerdict("not_proven", "test", "forced")
    fault = fault_launch(Fault("launch-fail", steps=9))
    t, device, record, report, golden = _run("inplace_add_one", verdict=not_proven,
                                             fault=fault)
    assert record.plan_mode == "written_allocations"
    assert record.saved_bytes == record.written_allocation_bytes >= 4096
    assert report.all_recovered and t.emu.memory.snapshot() == golden
    config = RecoveryConfig(not_proven="unrecoverable")
    t, _, record, report, golden = _run("inplace_add_one", config=config,
                                        verdict=not_proven, fault=fault)
    assert record.saved_bytes == 0 and not report.all_recovered
    assert t.emu.memory.snapshot() != golden


def test_timeout_from_step_limit_is_detected_and_recovered():
    def hang(emu, program, kernel, kw):
        return emu.launch(program, kernel, **dict(kw, step_limit=3))
    t, _, _, report, golden = _run("inplace_add_one", fault=hang, step_limit=10_000)
    assert "timed out" in report.detections[0].detail
    assert report.all_recovered and t.emu.memory.snapshot() == golden


def _pipeline(config, fault_at=None, deferred=True, scale_first=True):
    """scale x in place, y = x + z (vec_add), x = 0 (fill): three launches on one stream."""
    a = load_target("inplace_scale", 0)
    emu = a.emu
    device = EmulatorDevice(emu, deferred_errors=deferred)
    session = RecoverySession(device, config)
    n = 1024
    x = [v for v in a.values if isinstance(v, int) and v > 1 << 40][0]
    y, z = emu.alloc(4 * n), emu.alloc(4 * n)
    emu.copy_htod(z, np.arange(n, dtype=np.float32))
    from kernelcheck.faults.targets import fixture_ptx
    from kernelcheck.ptx.parser import parse_ptx_file
    mod_a = KernelModule(a.module, a.program)
    mod_b = session.load_module(parse_ptx_file(fixture_ptx("vec_add")))
    mod_c = session.load_module(parse_ptx_file(fixture_ptx("fill_f32")))
    launches = [(mod_a, a.entry, a.values),
                (mod_b, "vec_add", [y, x, z, n]),
                (mod_c, "fill_f32", [x, 0.0, n])][0 if scale_first else 1:]
    for k, (mod, name, values) in enumerate(launches):
        if k == fault_at:
            device.arm(fault_launch(Fault("launch-fail", steps=5)))
        session.launch(mod, name, grid=(4, 1, 1), block=(256, 1, 1), params=values)
    read = session.read
    return session, read, (x, y)


def test_late_fault_replays_a_window_of_several_launches():
    _, read, (x, y) = _pipeline(RecoveryConfig(), fault_at=None)
    want = read(y, 4096)
    session, read, _ = _pipeline(RecoveryConfig(redundant="off"), fault_at=0)
    report = session.synchronize(check=Checksum.of(lambda a, n: want if a == y else b"",
                                                   ((y, y + 4096),)))
    assert [d.kind for d in report.detections] == ["device_error"]
    assert report.detections[0].launch is None and report.detections[0].at == "synchronize"
    assert report.replays[0].launches == (0, 1, 2) and report.all_recovered
    assert read(y, 4096) == want
    assert report.launches[2].saved_bytes >= 4096   # fill saves x: launch 1 read it


def test_without_window_saves_the_log_is_not_re_executable():
    # y = x + z, then x = 0: x was read by the first launch and overwritten unsaved.
    session, _, _ = _pipeline(RecoveryConfig(window_saves=False, redundant="off"), fault_at=0,
                              scale_first=False)
    report = session.synchronize()
    assert report.replays[0].launches == () and not report.all_recovered
    session, _, _ = _pipeline(RecoveryConfig(redundant="off"), fault_at=0, scale_first=False)
    report = session.synchronize()
    assert report.replays[0].launches == (0, 1) and report.all_recovered


def test_user_check_at_synchronization_detects_silent_corruption():
    t, _, _, _, golden = _run("vec_add", disjoint=True)
    t.reset()
    device = EmulatorDevice(t.emu)
    session = RecoverySession(device, RecoveryConfig(redundant="off"))
    out = t.values[0]
    expected = Checksum(((out, out + 4096),), 0)
    good = Checksum.of(lambda a, n: _golden_bytes(golden, a, n), expected.ranges)
    device.arm(fault_launch(Fault("mem-after", address=out + 8, bits=4)))
    session.launch(KernelModule(t.module, t.program), t.entry, grid=t.grid, block=t.block,
                   params=t.values)
    report = session.synchronize(check=good)
    assert [d.kind for d in report.detections] == ["user_check"]
    assert report.all_recovered and t.emu.memory.snapshot() == golden


def _golden_bytes(snapshot, address, n):
    for base, data in snapshot.items():
        if base <= address < base + len(data):
            return data[address - base:address - base + n]
    raise KeyError(address)


def test_saved_bytes_are_a_fraction_of_the_written_allocations_for_strided_clobbers():
    t, device, record, report, golden = _run("vec_add", 1)
    written = IntervalSet(device.traces[0].written_bytes.ranges)
    assert record.saved_bytes <= record.written_allocation_bytes
    assert len(written) <= record.written_allocation_bytes
