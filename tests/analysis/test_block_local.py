"""Registers dead past the block that defines them are dropped from the walk's states."""

from kernelcheck.analysis.symbolic import _block_local_names
from kernelcheck.ptx.parser import parse_ptx

PTX = """.version 8.0
.target sm_90
.address_size 64
.entry k(.param .u64 out, .param .u32 n) {
  .reg .pred %p<3>; .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
L:
  mul.lo.u32 %r3, %r2, 4;
  cvt.u64.u32 %rd2, %r3;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  setp.eq.u32 %p2, %r2, 7;
  @%p2 mov.u32 %r4, 1;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, %r1;
  @%p1 bra L;
  ret;
}
"""


def test_temporaries_are_local_and_carried_values_are_not():
    function = parse_ptx(PTX).get_function("k")
    local = {name for names in _block_local_names(function).values() for name in names}
    # Defined and read in the loop body only: dead at every block boundary.
    assert {"%r3", "%rd2", "%rd3", "%p2"} <= local
    # Carried around the loop, read by the branch on the edges out, kept by a guarded
    # write, or read in a later block.
    assert not local & {"%r2", "%p1", "%r4", "%rd1", "%r1"}
