"""Cases: stable names, the PTX flavour a driver can load, relocation onto device memory."""

from __future__ import annotations

import pytest

from kernelcheck.errors import KernelcheckError
from kernelcheck.selftest.cases import (
    InvalidCase,
    find_case,
    fixture_cases,
    materialize,
    ptx_file,
    random_cases,
)
from kernelcheck.selftest.device import DeviceImage, ptx_isa_min_driver
from tests.conftest import FIXTURES


class FakeDevice:
    """Allocations far from the emulator's addresses, as a GPU gives them."""

    def __init__(self):
        self.next = 0x7A00_0000_0000
        self.memory = {}

    def alloc(self, n):
        base, self.next = self.next, self.next + ((n + 0xFFFF) & ~0xFFFF)
        self.memory[base] = bytearray(n)
        return base

    def free(self, base):
        del self.memory[base]


def test_drawn_cases_are_the_same_whatever_else_is_drawn():
    alone = find_case(FIXTURES, "vec_add~r3", seed=5)
    among = next(c for c in random_cases(FIXTURES, 6, 5) if c.name == "vec_add~r3")
    assert alone == among and alone.origin == "random:overlapping"
    assert find_case(FIXTURES, "vec_add#1", 0) == fixture_cases(FIXTURES, {"vec_add"})[1]
    with pytest.raises(KernelcheckError, match="KERNEL#N"):
        find_case(FIXTURES, "vec_add", 0)


def test_the_ptx_flavour_follows_the_driver():
    assert ptx_isa_min_driver("8.8") == 12090 and ptx_isa_min_driver("9.0") == 13000
    assert ptx_file(FIXTURES, "vec_add", 13000, "sm_90").parent.name == "sm_80"
    assert ptx_file(FIXTURES, "vec_add", 12090, "sm_90").parent.name == "nvrtc12"
    with pytest.raises(InvalidCase):
        ptx_file(FIXTURES, "vec_add", 12040, "sm_90")


def test_relocation_keeps_aliasing_and_offsets_inside_an_allocation():
    # vec_add#? with out overlapping a: the device pointers keep their distance
    case = next(c for c in fixture_cases(FIXTURES, {"vec_add"})
                if c.params["out"] != c.params["a"] and
                abs(c.params["out"] - c.params["a"]) < 4096)
    mat = materialize(FIXTURES, case)
    image = DeviceImage(FakeDevice(), mat.regions)
    moved = mat.device_params(image)
    assert moved["out"] - moved["a"] == case.params["out"] - case.params["a"]
    assert all(v % 256 == case.params[k] % 256 for k, v in moved.items()
               if k in ("out", "a", "b"))
    starts = {base for base, _ in image.allocations()}
    assert any(base <= moved["a"] < base + size for base, size in image.allocations())
    assert min(starts) >= 0x7A00_0000_0000 and moved["n"] == case.params["n"]


def test_an_instance_that_faults_on_the_emulator_is_invalid(monkeypatch):
    from kernelcheck.emu import Emulator, MemoryFault

    def fault(self, *args, **kwargs):
        raise MemoryFault("read of 4 bytes at 0x7f0000010000: not allocated")
    monkeypatch.setattr(Emulator, "launch", fault)
    with pytest.raises(InvalidCase, match="faults on the emulator"):
        materialize(FIXTURES, fixture_cases(FIXTURES, {"vec_add"})[0])
