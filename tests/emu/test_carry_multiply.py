"""Multi-word multiplication with mad.lo.cc / madc.hi chains, and mul24.hi/mad24.hi."""

from __future__ import annotations

import numpy as np

from kernelcheck.emu import Emulator

WIDE_PRODUCT = """
.version 9.0
.target sm_90
.address_size 64
.visible .entry wide(.param .u64 out, .param .u64 in)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 8;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.v2.u32 {%r2, %r3}, [%rd4];          // x = r3:r2, y = x
  // 64x64 -> low 96 bits of x*x from 32-bit pieces: (r3:r2) * (r3:r2)
  mul.lo.u32 %r4, %r2, %r2;                      // word 0
  mul.hi.u32 %r5, %r2, %r2;
  mad.lo.cc.u32 %r5, %r2, %r3, %r5;              // word 1, first cross term
  madc.hi.u32 %r6, %r2, %r3, 0;
  mad.lo.cc.u32 %r5, %r3, %r2, %r5;              // word 1, second cross term
  madc.hi.cc.u32 %r6, %r3, %r2, %r6;
  addc.u32 %r7, 0, 0;
  mad.lo.cc.u32 %r6, %r3, %r3, %r6;              // word 2
  madc.hi.u32 %r7, %r3, %r3, %r7;
  mul24.hi.u32 %r8, %r2, %r3;
  mad24.hi.s32 %r9, %r2, %r3, 5;
  mul.wide.u32 %rd5, %r1, 32;
  add.s64 %rd6, %rd1, %rd5;
  st.global.v4.u32 [%rd6], {%r4, %r5, %r6, %r7};
  st.global.v2.u32 [%rd6+16], {%r8, %r9};
  ret;
}
"""


def _s24(v: int) -> int:
    v &= 0xFFFFFF
    return v - (1 << 24) if v & 0x800000 else v


def test_carry_chains_compute_the_full_product():
    rng = np.random.default_rng(7)
    values = rng.integers(0, 2**64, size=64, dtype=np.uint64)
    values[:4] = [0, 2**64 - 1, 2**32 - 1, 2**63]
    emu = Emulator()
    program = emu.load_module(WIDE_PRODUCT)
    src = emu.alloc(values.nbytes)
    dst = emu.alloc(64 * 32)
    emu.copy_htod(src, values)
    emu.launch(program, "wide", grid=(1, 1, 1), block=(64, 1, 1), params=[dst, src])
    words = emu.copy_dtoh(dst, 64 * 32, np.uint32).reshape(64, 8)
    for k, x in enumerate(int(v) for v in values):
        square = x * x
        got = sum(int(w) << (32 * j) for j, w in enumerate(words[k, :4]))
        assert got == square % (1 << 128), hex(x)
        lo, hi = x & 0xFFFFFFFF, x >> 32
        assert int(words[k, 4]) == (((lo & 0xFFFFFF) * (hi & 0xFFFFFF)) >> 16) & 0xFFFFFFFF
        signed = ((_s24(lo) * _s24(hi)) >> 16) + 5
        assert int(words[k, 5]) == signed & 0xFFFFFFFF
