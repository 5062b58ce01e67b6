"""Instruction semantics on small hand-written kernels: one scalar result per thread."""

from __future__ import annotations

import numpy as np
import pytest

from kernelcheck.emu import BitFlip, Emulator, MemoryFault
from kernelcheck.errors import UnsupportedFeature

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def run_u32(body: str, threads: int = 32, regs: str = "", extra_params: str = ""):
    """Run ``body`` (which leaves its answer in %r9) and return %r9 of every thread."""
    ptx = HEAD + f""".visible .entry k(.param .u64 out{extra_params})
{{
  .reg .pred %p<8>; .reg .b32 %r<16>; .reg .b64 %rd<8>; .reg .f32 %f<8>; .reg .f64 %fd<4>;
  .reg .b16 %rs<4>; {regs}
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
{body}
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r9;
  ret;
}}"""
    emu = Emulator()
    out = emu.alloc(4 * threads)
    emu.launch(emu.load_module(ptx), "k", grid=(1,), block=(threads,), params=[out])
    return emu.copy_dtoh(out, 4 * threads, np.uint32)


def test_integer_division_by_zero_gives_hardware_results():
    r = run_u32("mov.u32 %r2, 0; div.u32 %r3, %r1, %r2; rem.u32 %r4, %r1, %r2;"
                "xor.b32 %r9, %r3, %r4;")
    assert r[5] == 0xFFFFFFFF ^ 5


def test_signed_division_truncates_toward_zero():
    r = run_u32("sub.s32 %r2, 3, %r1; div.s32 %r9, %r2, 2;", threads=8)
    assert r.view(np.int32).tolist() == [1, 1, 0, 0, 0, -1, -1, -2]


def test_shifts_clamp_and_bfe_sign_extends():
    r = run_u32("shl.b32 %r2, 1, %r1; bfe.s32 %r3, 0x00000F00, 8, 4; add.s32 %r9, %r2, %r3;",
                threads=34)
    assert r[3] == (8 - 1) & 0xFFFFFFFF
    assert r[33] == 0xFFFFFFFF  # 1 << 33 clamps to 0, plus -1


def test_cvt_float_to_int_saturates_and_nan_is_zero():
    r = run_u32("mov.f32 %f1, 0f7FC00000; cvt.rzi.s32.f32 %r2, %f1;"
                "mov.f32 %f2, 0f5F000000; cvt.rzi.s32.f32 %r3, %f2; add.s32 %r9, %r2, %r3;")
    assert r[0] == 0x7FFFFFFF


def test_setp_unordered_and_boolean_combination():
    r = run_u32("mov.f32 %f1, 0f7FC00000; setp.ltu.f32 %p1, %f1, 0f3F800000;"
                "setp.lt.and.s32 %p2, %r1, 4, %p1; selp.u32 %r9, 1, 0, %p2;", threads=8)
    assert r.tolist() == [1, 1, 1, 1, 0, 0, 0, 0]


def test_shfl_down_and_ballot():
    r = run_u32("shfl.sync.down.b32 %r2, %r1, 1, 31, -1;"
                "setp.lt.u32 %p1, %r1, 3; vote.sync.ballot.b32 %r3, %p1, -1;"
                "add.s32 %r9, %r2, %r3;")
    assert r[0] == 1 + 7 and r[31] == 31 + 7  # lane 31 reads itself


def test_divergent_branches_reconverge():
    body = """
  and.b32 %r2, %r1, 1; setp.eq.u32 %p1, %r2, 0;
  @%p1 bra EVEN;
  mul.lo.u32 %r9, %r1, 10; bra DONE;
EVEN:
  add.u32 %r9, %r1, 100;
DONE:
  add.u32 %r9, %r9, 1;"""
    r = run_u32(body, threads=6)
    assert r.tolist() == [101, 11, 103, 31, 105, 51]


def test_mov_pack_and_unpack():
    r = run_u32("mov.b32 %r2, 0x12345678; mov.b32 {%rs1, %rs2}, %r2;"
                "mov.b32 %r9, {%rs2, %rs1};")
    assert r[0] == 0x56781234


def test_out_of_bounds_access_names_instruction_thread_and_block():
    ptx = HEAD + """.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<3>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p]; mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r1;
  ret;
}"""
    emu = Emulator()
    p = emu.alloc(16)
    with pytest.raises(MemoryFault) as info:
        emu.launch(emu.load_module(ptx), "k", grid=(2,), block=(8,), params=[p])
    err = info.value
    assert err.tid == (4, 0, 0) and err.ctaid == (0, 0, 0) and err.address == p + 16
    assert err.index == 4 and "st.global.u32" in str(err)


def test_unsupported_instruction_names_opcode_and_kernel():
    ptx = HEAD + """.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<3>;
  wmma.load.a.sync.aligned.row.m16n16k16.f16 {%r1, %r2}, [p];
  ret;
}"""
    with pytest.raises(UnsupportedFeature) as info:
        Emulator().load_module(ptx)
    assert "wmma.load" in str(info.value) and "k:" in str(info.value)


def test_bit_flip_hits_one_thread_once():
    ptx = HEAD + """.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<3>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p]; mov.u32 %r1, %tid.x; mov.u32 %r2, %r1;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r2;
  ret;
}"""
    emu = Emulator()
    p = emu.alloc(4 * 64)
    result = emu.launch(emu.load_module(ptx), "k", grid=(2,), block=(32,), params=[p],
                        inject=BitFlip(instruction=2, ctaid=(1, 0, 0), tid=(3, 0, 0),
                                       bits=0x100))
    got = emu.copy_dtoh(p, 4 * 64, np.uint32)
    want = np.zeros(64, dtype=np.uint32)
    want[:32] = np.arange(32)  # both blocks write out[tid]; block 1 (flipped) stores last
    want[3] ^= 0x100
    assert result.fault_injected and np.array_equal(got, want)


def test_atomics_follow_lane_order():
    ptx = HEAD + """.visible .entry k(.param .u64 p, .param .u64 q)
{
  .reg .b32 %r<4>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [p]; ld.param.u64 %rd4, [q]; mov.u32 %r1, %tid.x;
  atom.global.inc.u32 %r2, [%rd1], 4;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd4, %rd2; st.global.u32 [%rd3], %r2;
  ret;
}"""
    emu = Emulator()
    c, t = emu.alloc(4), emu.alloc(4 * 8)
    res = emu.launch(emu.load_module(ptx), "k", grid=(1,), block=(8,), params=[c, t],
                     trace=True)
    assert emu.copy_dtoh(t, 32, np.uint32).tolist() == [0, 1, 2, 3, 4, 0, 1, 2]
    assert res.trace.verdict == "not_idempotent"
    assert res.trace.atomics[0].op == "inc" and not res.trace.atomics[0].idempotent_in_effect


_INDEXED_PARAM = HEAD + """.visible .entry k(.param .u64 out, .param .align 8 .b8 t[40])
{
  .reg .b32 %r<6>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  mov.b64 %rd2, t;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.param.u32 %r2, [%rd4+4];
  ld.param.s8 %r3, [%rd4+4];
  add.s32 %r4, %r2, %r3;
  mul.wide.u32 %rd5, %r1, 4; add.s64 %rd6, %rd1, %rd5; st.global.u32 [%rd6], %r4;
  ret;
}"""


def test_param_read_through_a_kernel_parameter_address_indexes_the_buffer():
    # ld.param [%r+imm] with %r = the parameter's address plus a per-thread index: a by-value
    # array (a table of pointers and sizes) read at each thread's offset.
    table = np.array([0, 5, 6, 0x80, 8, 9, 10, 11, 12, 13], dtype=np.uint32)
    emu = Emulator()
    out = emu.alloc(4 * 9)
    emu.launch(emu.load_module(_INDEXED_PARAM), "k", grid=(1,), block=(9,),
               params=[out, table.tobytes()])
    got = emu.copy_dtoh(out, 4 * 9, np.uint32)
    want = [(int(v) + int(np.int8(v & 0xFF))) & 0xFFFFFFFF for v in table[1:]]
    assert got.tolist() == want


def test_param_read_through_a_register_past_the_buffer_faults():
    emu = Emulator()
    out = emu.alloc(4 * 16)
    with pytest.raises(MemoryFault, match="past the end of the kernel parameters"):
        emu.launch(emu.load_module(_INDEXED_PARAM), "k", grid=(1,), block=(16,),
                   params=[out, bytes(40)])


def test_store_to_param_through_a_register_address_is_unsupported():
    ptx = HEAD + """.visible .entry k(.param .align 8 .b8 t[16])
{
  .reg .b32 %r<2>; .reg .b64 %rd<3>;
  mov.b64 %rd1, t; mov.u32 %r1, 1;
  st.param.u32 [%rd1+4], %r1;
  ret;
}"""
    with pytest.raises(UnsupportedFeature, match="through a register address"):
        Emulator().load_module(ptx)


def _table_read(scale: int):
    ptx = HEAD + f""".visible .entry k(.param .align 8 .b8 tbl[32], .param .u64 out)
{{
  .reg .b32 %r<3>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out]; mov.u32 %r1, %tid.x;
  mov.b64 %rd2, tbl; mul.wide.u32 %rd3, %r1, {scale}; add.s64 %rd4, %rd2, %rd3;
  ld.param.u64 %rd5, [%rd4];
  mul.wide.u32 %rd6, %r1, 8; add.s64 %rd7, %rd1, %rd6; st.global.u64 [%rd7], %rd5;
  ret;
}}"""
    emu = Emulator()
    out = emu.alloc(8 * 4)
    table = b"".join((0x1000 * (k + 1)).to_bytes(8, "little") for k in range(4))
    emu.launch(emu.load_module(ptx), "k", grid=(1,), block=(4,), params=[table, out])
    return emu.copy_dtoh(out, 8 * 4, np.uint64)


def test_table_in_the_parameters_is_read_at_aligned_offsets_only():
    # Each thread reads the 8-byte entry at 8*tid; at 4*tid half the threads would read
    # across two entries, which the hardware refuses as a misaligned address.
    assert list(_table_read(8)) == [0x1000, 0x2000, 0x3000, 0x4000]
    with pytest.raises(MemoryFault, match="misaligned"):
        _table_read(4)
