"""Video, barrier-reduction, warp-reduction, atomic and asynchronous-copy semantics."""

from __future__ import annotations

import numpy as np
import pytest

from kernelcheck.errors import UnsupportedFeature
from tests.emu.ptx_kernels import run_kernel, scalar


@pytest.mark.parametrize("body,expected", [
    ("vadd.s32.s32.s32.sat %r9, 0x7fffffff, 1;", 0x7FFFFFFF),
    ("vadd.u32.u32.u32 %r9, 0xffffffff, 2;", 1),
    ("vsub.u32.u32.u32.sat %r9, 1, 2;", 0),
    ("vabsdiff.u32.s32.s32 %r9, -5, 7;", 12),
    ("vmin.s32.s32.s32.add %r9, -5, 7, 100;", 95),
    ("vshl.u32.u32.u32.clamp %r9, 1, 40;", 0),
    ("vshl.u32.u32.u32.wrap %r9, 1, 33;", 2),
    ("vshr.s32.s32.u32.clamp %r9, 0x80000000, 40;", 0xFFFFFFFF),
    ("vset.s32.s32.lt %r9, -1, 0;", 1),
    ("vset.u32.u32.lt %r9, 0xffffffff, 0;", 0),
    ("vmad.u32.u32.u32.shr15 %r9, 0x10000, 0x10000, 0;", 0x20000),
    ("vmad.s32.s32.s32.sat %r9, 0x40000000, 4, 0;", 0x7FFFFFFF),
    ("vadd2.s32.s32.s32.sat %r9, 0x7fff0001, 0x00010001, 0;", 0x7FFF0002),
    ("vadd2.u32.u32.u32.add %r9, 0x00030002, 0x00010001, 10;", 17),
    ("vavrg2.u32.u32.u32 %r9, 0x00030001, 0x00000002, 0;", 0x00020002),
    ("vavrg4.s32.s32.s32 %r9, 0x000000ff, 0x000000fe, 0;", 0x000000FE),
    ("vmax4.u32.u32.u32 %r9, 0x01020304, 0x04030201, 0;", 0x04030304),
    ("vset4.u32.u32.gt.add %r9, 0x05050505, 0x01060106, 100;", 102),
    ("vsub4.s32.s32.s32.sat %r9, 0x80808080, 0x01010101, 0;", 0x80808080),
])
def test_video(body, expected):
    assert scalar(body)[0] == expected


def test_bar_red_popc_and_or_over_the_block():
    body = """
  setp.lt.u32 %p1, %r1, 10;
  bar.red.popc.u32 %r9, 0, %p1;
  bar.red.and.pred %p2, 0, %p1; bar.red.or.pred %p3, 0, %p1;
  selp.u32 %r10, 1000, 0, %p2; selp.u32 %r11, 100, 0, %p3;
  add.u32 %r9, %r9, %r10; add.u32 %r9, %r9, %r11;"""
    assert (scalar(body, threads=64) == 110).all()


def test_bar_arrive_is_unsupported():
    with pytest.raises(UnsupportedFeature, match="arrive"):
        scalar("bar.arrive 1, 64; mov.u32 %r9, 0;")


def test_redux_f32_min_max_nan_and_abs():
    body = """
  cvt.rn.f32.u32 %f1, %r1; sub.f32 %f1, 0f41000000, %f1;
  redux.sync.min.f32 %f2, %f1, 0xffffffff;
  redux.sync.max.abs.f32 %f3, %f1, 0xffffffff;
  setp.eq.u32 %p1, %r1, 3; @%p1 mov.f32 %f1, 0f7FC00000;
  redux.sync.max.f32 %f4, %f1, 0xffffffff;
  redux.sync.max.NaN.f32 %f5, %f1, 0xffffffff;
  st.global.v4.f32 [%rd9], {%f2, %f3, %f4, %f5};"""
    raw = run_kernel(body, 32, out_words=4).view(np.float32)
    assert raw[0, 0] == -23.0 and raw[0, 1] == 23.0 and raw[0, 2] == 8.0
    assert raw.view(np.uint32)[0, 3] == 0x7FFFFFFF


def test_atom_add_f16_rounds_each_add_and_vector_atom_adds_elementwise():
    body = """
  ld.param.u64 %rd2, [buf];
  mov.b16 %rs1, 0x3c00;
  atom.global.add.noftz.f16 %rs2, [%rd2], %rs1;
  mov.f32 %f1, 0f3F800000; mov.f32 %f2, 0f40000000;
  atom.global.v2.f32.add {%f3, %f4}, [%rd2+8], {%f1, %f2};
  mov.u32 %r9, 0; st.global.u32 [%rd9], %r9;"""
    from kernelcheck.emu import Emulator
    from tests.emu.ptx_kernels import HEAD, REGS
    ptx = HEAD + f""".visible .entry k(.param .u64 out, .param .u64 buf) {{ {REGS}
  ld.param.u64 %rd1, [out]; mov.u32 %r1, %tid.x; mul.wide.u32 %rd8, %r1, 4;
  add.s64 %rd9, %rd1, %rd8; {body} ret; }}"""
    emu = Emulator()
    out, buf = emu.alloc(4 * 64), emu.alloc(16)
    emu.copy_htod(buf, np.zeros(4, dtype=np.float32))
    emu.launch(emu.load_module(ptx), "k", grid=(1,), block=(64,), params=[out, buf])
    got = emu.copy_dtoh(buf, 16, np.uint8)
    assert got[:2].view(np.float16)[0] == 64.0
    assert got[8:].view(np.float32).tolist() == [64.0, 128.0]


def test_cp_async_copies_and_zero_fills_past_src_size():
    body = """
  ld.param.u64 %rd2, [src]; mov.u64 %rd4, smem;
  mul.wide.u32 %rd5, %r1, 16; add.s64 %rd6, %rd2, %rd5; add.s64 %rd7, %rd4, %rd5;
  cp.async.cg.shared.global [%rd7], [%rd6], 16, %r1;
  cp.async.commit_group; cp.async.wait_group 0; bar.sync 0;
  ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%rd7];
  st.global.v4.u32 [%rd9], {%r10, %r11, %r12, %r13};"""
    src = np.arange(64, dtype=np.uint8).repeat(1).reshape(-1)
    src = np.tile(np.arange(16, dtype=np.uint8) + 1, 4)
    raw = run_kernel(body, 4, inputs={"src": src}, out_words=4, shared=64)
    got = raw.view(np.uint8).reshape(4, 16)
    for lane in range(4):
        expected = np.where(np.arange(16) < lane, np.arange(16) + 1, 0)
        assert got[lane].tolist() == expected.tolist()


def test_setp_f16x2_gives_lower_half_to_p_and_upper_to_q():
    body = """
  setp.lt.f16x2 %p1|%p2, 0x3c004000, 0x40003c00;
  selp.u32 %r2, 1, 0, %p1; selp.u32 %r3, 2, 0, %p2; or.b32 %r9, %r2, %r3;"""
    # lower halves: 2.0 < 1.0 false; upper halves: 1.0 < 2.0 true
    assert scalar(body)[0] == 2


def test_set_f16x2_writes_one_point_zero_per_half():
    assert scalar("set.lt.f16x2.f16x2 %r9, 0x3c004000, 0x40003c00;")[0] == 0x3C000000
    assert scalar("set.lt.u32.f16x2 %r9, 0x3c004000, 0x40003c00;")[0] == 0xFFFF0000


def test_elect_sync_picks_the_lowest_executing_lane():
    body = """
  setp.lt.u32 %p1, %r1, 3; @%p1 bra SKIP;
  elect.sync %r2|%p2, 0xffffffff; selp.u32 %r3, 100, 0, %p2; add.u32 %r9, %r2, %r3;
  st.global.u32 [%rd9], %r9;
SKIP:"""
    got = run_kernel(body, 8)[:, 0]
    assert got.tolist() == [0, 0, 0, 103, 3, 3, 3, 3]


def test_isspacep_sees_the_shared_window():
    body = ("mov.u64 %rd2, smem; cvta.shared.u64 %rd3, %rd2; isspacep.shared %p1, %rd3;"
            "isspacep.global %p2, %rd3; isspacep.global %p3, %rd1;"
            "selp.u32 %r2, 1, 0, %p1; selp.u32 %r3, 2, 0, %p2; selp.u32 %r4, 4, 0, %p3;"
            "or.b32 %r9, %r2, %r3; or.b32 %r9, %r9, %r4;")
    assert scalar(body, shared=16)[0] == 5


def test_slct_ftz_reads_a_negative_subnormal_as_minus_zero():
    assert scalar("slct.ftz.u32.f32 %r9, 1, 2, 0f80000001;")[0] == 1
    assert scalar("slct.u32.f32 %r9, 1, 2, 0f80000001;")[0] == 2
