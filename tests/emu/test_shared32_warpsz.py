"""A 32-bit register address wraps modulo 2**32 (nvcc writes shared addresses as
``base - 64*tid`` and adds an offset back in the instruction), and the predefined PTX
constant ``WARP_SZ`` reads as 32."""

from __future__ import annotations

import numpy as np

from kernelcheck.emu import Emulator
from tests.emu.ptx_kernels import HEAD


def _run(body: str, threads: int = 4) -> np.ndarray:
    ptx = HEAD + f"""
.shared .align 4 .b8 smem[64];
.visible .entry k(.param .u64 out)
{{
  .reg .b64 %rd<4>; .reg .b32 %r<12>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd3, %rd1, %rd2;
{body}
  ret;
}}"""
    emu = Emulator()
    out = emu.alloc(4 * threads)
    emu.launch(emu.load_module(ptx), "k", grid=(1,), block=(threads,), params=[out])
    return emu.copy_dtoh(out, 4 * threads, np.uint32)


def test_shared_address_in_a_32_bit_register_wraps():
    # Each thread stores t + 100 at smem[t]; then reads [smem - 64 + 68], which is smem[1]:
    # smem - 64 wraps below zero in 32 bits and the offset brings it back into the window.
    got = _run("""
  mov.u32 %r1, smem;
  shl.b32 %r2, %r0, 2;
  add.s32 %r3, %r1, %r2;
  add.s32 %r4, %r0, 100;
  st.shared.u32 [%r3], %r4;
  bar.sync 0;
  sub.s32 %r6, %r1, 64;
  ld.shared.u32 %r9, [%r6+68];
  st.global.u32 [%rd3], %r9;
""")
    assert list(got) == [101, 101, 101, 101]


def test_warp_sz_is_32():
    got = _run("""
  mov.u32 %r1, WARP_SZ;
  st.global.u32 [%rd3], %r1;
""", threads=2)
    assert list(got) == [32, 32]
