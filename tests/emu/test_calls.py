"""Calls of device functions with ``.reg`` parameters (PTX ISA 5.1.6.4): a vector register
(``.reg .v2 .u32 v``, ISA 5.4.2) passed to or returned from a vector ``.reg`` parameter binds
element by element, and a call operand the emulator cannot bind is reported by name."""

from __future__ import annotations

import numpy as np
import pytest

from kernelcheck.emu import Emulator
from kernelcheck.errors import UnsupportedFeature
from kernelcheck.ptx.parser import parse_ptx

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"

VECTOR_CALLS = HEAD + """
.func (.reg .v4 .u32 r) rotate(.reg .v4 .u32 a, .reg .u32 k)
{
  add.u32 r.x, a.y, k;
  add.u32 r.y, a.z, k;
  add.u32 r.z, a.w, k;
  add.u32 r.w, a.x, k;
  ret;
}
.func (.reg .v2 .u64 r, .reg .u32 s) split(.reg .u64 x, .reg .v2 .u32 h)
{
  mov.b64 {r.x, s}, x;
  cvt.u64.u32 r.y, h.y;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .v4 .u32 %v;
  .reg .v2 .u32 %h;
  .reg .v2 .u64 %w;
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .reg .pred %p;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.v4.u32 %v, {10, 20, 30, 40};
  setp.lt.u32 %p, %r1, 2;
  @%p call (%v), rotate, (%v, %r1);
  mul.wide.u32 %rd2, %r1, 48;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], %v;
  mov.b64 %rd2, 0x1122334455667788;
  mov.v2.u32 %h, {7, %r1};
  call (%w, %r2), split, (%rd2, %h);
  st.global.u64 [%rd3+16], %w.x;
  st.global.u64 [%rd3+24], %w.y;
  st.global.u32 [%rd3+32], %r2;
  ret;
}
"""


def test_vector_registers_bind_element_by_element():
    emu = Emulator()
    out = emu.alloc(48 * 4)
    emu.launch(emu.load_module(VECTOR_CALLS), "k", grid=(1,), block=(4,), params=[out])
    raw = emu.copy_dtoh(out, 48 * 4, np.uint8).tobytes()
    for t in range(4):
        row = raw[48 * t:48 * t + 48]
        v = np.frombuffer(row[:16], "<u4").tolist()
        # rotate returns {a.y + k, a.z + k, a.w + k, a.x + k}; threads 2 and 3 skip the call
        # (its guard is false), so %v keeps {10, 20, 30, 40}.
        assert v == ([20 + t, 30 + t, 40 + t, 10 + t] if t < 2 else [10, 20, 30, 40])
        w_x, w_y = np.frombuffer(row[16:32], "<u8").tolist()
        # mov.b64 {lo, hi}, x unpacks the low word first (ISA 9.7.9.1 mov); h.y is %tid.x.
        assert w_x == 0x55667788 and w_y == t
        assert int.from_bytes(row[32:36], "little") == 0x11223344


BAD = HEAD + """
.func (.reg .v2 .u32 r) pair(.reg .v2 .u32 a)
{{
  mov.v2.u32 r, a;
  ret;
}}
.func one(.param .b32 a)
{{
  ret;
}}
.visible .entry k(.param .u64 out)
{{
  .reg .v2 .u32 %v;
  .reg .b32 %r<2>;
  {call}
  ret;
}}
"""


@pytest.mark.parametrize("call, named", [
    ("call (%v), pair, (%r1);", "call argument %r1 of pair is not a vector of 2 registers"),
    ("call (%r1), pair, (%v);", "call return value %r1 of pair is not a vector of 2"),
    ("call one, (5);", "call argument 5 is neither a call-scope .param nor a register"),
    ("call one, (%r1);", "call argument %r1 of one is not a call-scope .param variable"),
])
def test_a_call_operand_that_cannot_be_bound_is_named(call, named):
    emu = Emulator()
    with pytest.raises(UnsupportedFeature, match=named.replace(".", r"\.")):
        emu.launch(emu.load_module(parse_ptx(BAD.format(call=call))), "k", grid=(1,),
                   block=(1,), params=[emu.alloc(4)])
