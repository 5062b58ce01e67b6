"""A flipped address near 2**64 in shared memory is a memory fault (a DUE), not a crash."""

from __future__ import annotations

import pytest

from kernelcheck.emu import Emulator, MemoryFault

PTX = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 a)
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>;
  .shared .align 4 .b32 s[16];
  ld.param.u64 %rd1, [a];
  atom.shared.add.u32 %r3, [%rd1], 1;
  ret;
}
"""


@pytest.mark.parametrize("address", [0xFFFF_FFFF_FFFF_FFFC, 0xFFFF_FFFF_FFFF_FF00, 64])
def test_shared_atomic_at_a_wrapping_address_faults(address):
    emu = Emulator()
    program = emu.load_module(PTX)
    with pytest.raises(MemoryFault, match="out of bounds"):
        emu.launch(program, "k", grid=(1,), block=(1,), params=[address])


GLOBAL_PTX = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry g(.param .u64 a)
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [a];
  atom.global.add.u32 %r3, [%rd1], 1;
  ret;
}
"""


def test_global_atomic_far_above_every_allocation_faults():
    emu = Emulator()
    base = emu.alloc(4096)
    program = emu.load_module(GLOBAL_PTX)
    with pytest.raises(MemoryFault):
        emu.launch(program, "g", grid=(1,), block=(1,), params=[base + (1 << 63) + 8])
