"""Device memory: addresses, copies, and the faults memcheck would report."""

import numpy as np
import pytest

from kernelcheck.emu import DeviceMemory, MemoryFault
from kernelcheck.emu.memory import ALIGNMENT, HEAP_BASE


def test_allocations_look_like_device_pointers_and_leave_gaps():
    mem = DeviceMemory()
    a = mem.alloc(100)
    b = mem.alloc(1)
    assert a == HEAP_BASE
    assert b % ALIGNMENT == 0
    assert b >= a + 100 + 4096  # running off the end of a never lands in b


def test_copies_round_trip_little_endian():
    mem = DeviceMemory()
    p = mem.alloc(8)
    mem.copy_htod(p, np.array([0x11223344, 0x55667788], dtype=np.uint32))
    assert mem.copy_dtoh(p, 8).tolist() == [0x44, 0x33, 0x22, 0x11, 0x88, 0x77, 0x66, 0x55]
    q = mem.alloc(8)
    mem.copy_dtod(q, p + 4, 4)
    assert mem.copy_dtoh(q, 4, np.uint32)[0] == 0x55667788
    mem.memset(q, 0xAB, 2)
    assert mem.copy_dtoh(q, 4).tolist() == [0xAB, 0xAB, 0x66, 0x55]


def test_out_of_bounds_copy_faults_with_the_address():
    mem = DeviceMemory()
    p = mem.alloc(16)
    with pytest.raises(MemoryFault) as info:
        mem.copy_dtoh(p + 12, 8)
    assert info.value.address == p + 12
    assert "out of bounds" in str(info.value)


def test_use_after_free_is_named():
    mem = DeviceMemory()
    p = mem.alloc(16)
    mem.free(p)
    with pytest.raises(MemoryFault, match="use after free"):
        mem.copy_dtoh(p, 4)


def test_locate_checks_alignment_and_splits_allocations():
    mem = DeviceMemory()
    a = mem.alloc(64)
    b = mem.alloc(64)
    groups = mem.locate(np.array([a, b + 8, a + 4], dtype=np.uint64), 4, "read")
    assert sorted((g[0].base, g[1].tolist(), g[2].tolist()) for g in groups) == [
        (a, [0, 2], [0, 4]), (b, [1], [8])]
    with pytest.raises(MemoryFault, match="misaligned"):
        mem.locate(np.array([a + 2], dtype=np.uint64), 4, "read")
    with pytest.raises(MemoryFault):
        mem.locate(np.array([a, a + 64], dtype=np.uint64), 4, "read")
