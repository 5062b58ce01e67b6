"""Warp matrix instructions (PTX ISA 9.7.14): ldmatrix feeding mma.sync as compiled GEMM
tiles do, against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from tests.emu.ptx_kernels import run_kernel

# Lane l stores its 4 accumulator registers at out[4l..4l+3]; element i of lane l is
# D[g + 8*(i >> 1)][2t + (i & 1)] (g = l >> 2, t = l & 3), the C/D layout of the
# m16n8k16 and m16n8k8 shapes.
_LANE = np.arange(32)
_ROWS = (_LANE[:, None] >> 2) + 8 * (np.arange(4)[None, :] >> 1)
_COLS = 2 * (_LANE[:, None] & 3) + (np.arange(4)[None, :] & 1)

_LOAD = """
  ld.param.u64 %rd2, [a]; ld.param.u64 %rd3, [b];
  mov.u64 %rd4, smem;
  mul.wide.u32 %rd5, %r1, 16;
  add.s64 %rd6, %rd2, %rd5; ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd6];
  add.s64 %rd7, %rd4, %rd5; st.shared.v4.u32 [%rd7], {%r10, %r11, %r12, %r13};
  setp.lt.u32 %p1, %r1, 16;
  @%p1 add.s64 %rd6, %rd3, %rd5; @%p1 ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd6];
  @%p1 add.s64 %rd7, %rd7, 512; @%p1 st.shared.v4.u32 [%rd7], {%r10, %r11, %r12, %r13};
  bar.sync 0;
  and.b32 %r2, %r1, 15; shr.u32 %r3, %r1, 4;
  mul.lo.u32 %r4, %r2, 32; mul.lo.u32 %r5, %r3, 16; add.u32 %r4, %r4, %r5;
  cvt.u64.u32 %rd10, %r4; add.s64 %rd10, %rd4, %rd10;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r20, %r21, %r22, %r23}, [%rd10];
  mul.lo.u32 %r6, %r2, 16; cvt.u64.u32 %rd11, %r6; add.s64 %rd11, %rd4, %rd11;
  add.s64 %rd11, %rd11, 512;
  ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r24, %r25}, [%rd11];
"""


def _run(atype, a, b):
    body = _LOAD + f"""
  mov.f32 %f1, 0f00000000;
  mma.sync.aligned.m16n8k16.row.col.f32.{atype}.{atype}.f32 {{%f2, %f3, %f4, %f5}},
      {{%r20, %r21, %r22, %r23}}, {{%r24, %r25}}, {{%f1, %f1, %f1, %f1}};
  st.global.v4.f32 [%rd9], {{%f2, %f3, %f4, %f5}};"""
    raw = run_kernel(body, 32, inputs={"a": a, "b": b}, out_words=4, shared=768)
    got = np.zeros((16, 8), dtype=np.float32)
    got[_ROWS, _COLS] = raw.view(np.float32)
    return got


def test_ldmatrix_and_mma_m16n8k16_f16_compute_the_product():
    rng = np.random.default_rng(7)
    a = rng.integers(-4, 5, size=(16, 16)).astype(np.float16)
    b = rng.integers(-4, 5, size=(16, 8)).astype(np.float16)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    assert np.array_equal(_run("f16", a, b), expected.astype(np.float32))


def test_mma_m16n8k16_bf16():
    rng = np.random.default_rng(3)
    a = rng.integers(-8, 9, size=(16, 16)).astype(np.float32)
    b = rng.integers(-8, 9, size=(16, 8)).astype(np.float32)
    bits = lambda x: (x.view(np.uint32) >> 16).astype(np.uint16)  # noqa: E731 (exact)
    got = _run("bf16", bits(a), bits(b))
    assert np.array_equal(got, (a.astype(np.float64) @ b).astype(np.float32))


def test_mma_int8_m16n8k32_wraps_and_satfinite_clamps():
    # Every lane holds A = 127 and B = 127 bytes: each D element is 32 * 127 * 127 + c.
    body = """
  mov.b32 %r20, 0x7f7f7f7f; mov.b32 %r24, 0x7f7f7f7f; mov.b32 %r26, 0x7fffffff;
  mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%r2, %r3, %r4, %r5},
      {%r20, %r20, %r20, %r20}, {%r24, %r24}, {%r26, %r26, %r26, %r26};
  mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r6, %r7, %r8, %r10},
      {%r20, %r20, %r20, %r20}, {%r24, %r24}, {%r26, %r26, %r26, %r26};
  st.global.v2.u32 [%rd9], {%r2, %r6};"""
    raw = run_kernel(body, 32, out_words=2)
    assert (raw[:, 0] == 0x7FFFFFFF).all()
    assert (raw[:, 1] == (0x7FFFFFFF + 32 * 127 * 127) % 2**32).all()


def test_stmatrix_is_the_inverse_of_ldmatrix():
    # Each lane writes its rows' addresses; a round trip through registers keeps the bytes.
    body = """
  mov.u64 %rd4, smem;
  mul.lo.u32 %r2, %r1, 0x00010001; add.u32 %r2, %r2, 0x01000000;
  mul.wide.u32 %rd5, %r1, 16; add.s64 %rd6, %rd4, %rd5;
  stmatrix.sync.aligned.m8n8.x4.shared.b16 [%rd6], {%r2, %r2, %r2, %r2};
  bar.sync 0;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r3, %r4, %r5, %r6}, [%rd6];
  st.global.v4.u32 [%rd9], {%r3, %r4, %r5, %r6};"""
    raw = run_kernel(body, 32, out_words=4, shared=512)
    lane = np.arange(32, dtype=np.uint32)
    expected = lane * 0x00010001 + 0x01000000
    assert (raw == expected[:, None]).all()


@pytest.mark.parametrize("bad", ["mma.sync.aligned.m16n8k16.row.row.f32.f16.f16.f32",
                                 "mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f32",
                                 "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"])
def test_shapes_not_run_are_unsupported(bad):
    from kernelcheck.errors import UnsupportedFeature
    body = f"{bad} {{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}}, {{%r1,%r2}}, {{%r3,%r4}}, " \
           "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8};"
    with pytest.raises(UnsupportedFeature):
        run_kernel(body, 32)


@pytest.mark.parametrize("a_layout", ["row", "col"])
def test_wmma_load_mma_store_compute_the_product(a_layout):
    rng = np.random.default_rng(11)
    a = rng.integers(-4, 5, size=(16, 16)).astype(np.float16)
    b = rng.integers(-4, 5, size=(16, 16)).astype(np.float16)
    c = rng.integers(-4, 5, size=(16, 16)).astype(np.float32)
    a_mem = a if a_layout == "row" else np.ascontiguousarray(a.T)
    regs8 = ", ".join(f"%r{k}" for k in range(10, 18))
    regs8b = ", ".join(f"%r{k}" for k in range(20, 28))
    f8 = ", ".join(f"%f{k}" for k in range(1, 9))
    body = f"""
  ld.param.u64 %rd2, [a]; ld.param.u64 %rd3, [b]; ld.param.u64 %rd4, [c];
  wmma.load.a.sync.aligned.{a_layout}.m16n16k16.global.f16 {{{regs8}}}, [%rd2], 16;
  wmma.load.b.sync.aligned.row.m16n16k16.global.f16 {{{regs8b}}}, [%rd3], 16;
  wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {{{f8}}}, [%rd4], 16;
  wmma.mma.sync.aligned.{a_layout}.row.m16n16k16.f32.f32 {{{f8}}}, {{{regs8}}}, {{{regs8b}}},
      {{{f8}}};
  wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd4], {{{f8}}}, 16;"""
    from kernelcheck.emu import Emulator
    from tests.emu.ptx_kernels import HEAD, REGS
    ptx = HEAD + f""".visible .entry k(.param .u64 a, .param .u64 b, .param .u64 c) {{ {REGS}
{body}
  ret; }}"""
    emu = Emulator()
    ptrs = []
    for array in (a_mem, b, c):
        ptr = emu.alloc(array.nbytes)
        emu.copy_htod(ptr, np.ascontiguousarray(array))
        ptrs.append(ptr)
    emu.launch(emu.load_module(ptx), "k", grid=(1,), block=(32,), params=ptrs)
    got = emu.copy_dtoh(ptrs[2], c.nbytes, np.float32).reshape(16, 16)
    expected = (a.astype(np.float64) @ b.astype(np.float64) + c).astype(np.float32)
    assert np.array_equal(got, expected)


def _m8n8k4_positions(lane: int, a_layout: str, b_layout: str):
    """(product, row, col) of each fragment element of ``lane`` for mma.m8n8k4 on .f16, from
    the formulas of PTX ISA 9.7.14.5.1: A, B, C (.f16), C (.f32)."""
    q, r, h = (lane >> 2) & 3, lane % 4, 4 if lane >= 16 else 0
    a = [(q, r + h, i) if a_layout == "row" else (q, i + h, r) for i in range(4)]
    b = [(q, r, i + h) if b_layout == "row" else (q, i, r + h) for i in range(4)]
    c16 = [(q, r + h, i) for i in range(8)]
    c32 = [(q, (lane & 1) + (i & 2) + h, (i & 4) + (lane & 2) + (i & 1)) for i in range(8)]
    return a, b, c16, c32


@pytest.mark.parametrize("a_layout", ["row", "col"])
@pytest.mark.parametrize("b_layout", ["row", "col"])
@pytest.mark.parametrize("ctype", ["f16", "f32"])
def test_mma_m8n8k4_f16_computes_four_products_by_quad_pairs(a_layout, b_layout, ctype):
    rng = np.random.default_rng(5)
    A = rng.integers(-4, 5, size=(4, 8, 4)).astype(np.float16)
    B = rng.integers(-4, 5, size=(4, 4, 8)).astype(np.float16)
    C = rng.integers(-8, 9, size=(4, 8, 8)).astype(np.float16)
    # Each lane's registers: 2 words of A, 2 of B, then 4 (f16) or 8 (f32) of C.
    words = np.zeros((32, 12), dtype=np.uint32)
    for lane in range(32):
        pa, pb, c16, c32 = _m8n8k4_positions(lane, a_layout, b_layout)
        halves = np.array([A[p] for p in pa] + [B[p] for p in pb], dtype=np.float16)
        words[lane, :4] = halves.view(np.uint16).astype(np.uint32).reshape(4, 2) @ [1, 1 << 16]
        if ctype == "f16":
            ch = np.array([C[p] for p in c16], dtype=np.float16).view(np.uint16)
            words[lane, 4:8] = ch.astype(np.uint32).reshape(4, 2) @ [1, 1 << 16]
        else:
            words[lane, 4:] = np.array([C[p] for p in c32], dtype=np.float32).view(np.uint32)
    nc = 4 if ctype == "f16" else 8
    c_regs = ", ".join(f"%r{k}" for k in range(14, 14 + nc))
    d_regs = ", ".join(f"%r{k}" for k in range(30, 38))
    body = f"""
  ld.param.u64 %rd2, [w]; mul.wide.u32 %rd3, %r1, 48; add.s64 %rd2, %rd2, %rd3;
  ld.global.v4.u32 {{%r10, %r11, %r12, %r13}}, [%rd2];
  ld.global.v4.u32 {{%r14, %r15, %r16, %r17}}, [%rd2+16];
  ld.global.v4.u32 {{%r18, %r19, %r20, %r21}}, [%rd2+32];
  mma.sync.aligned.m8n8k4.{a_layout}.{b_layout}.f32.f16.f16.{ctype} {{{d_regs}}},
      {{%r10, %r11}}, {{%r12, %r13}}, {{{c_regs}}};
  st.global.v4.u32 [%rd9], {{%r30, %r31, %r32, %r33}};
  st.global.v4.u32 [%rd9+16], {{%r34, %r35, %r36, %r37}};"""
    raw = run_kernel(body, 32, inputs={"w": words}, out_words=8)
    expected = (np.einsum("qmk,qkn->qmn", A.astype(np.float64), B.astype(np.float64))
                + C).astype(np.float32)
    got = np.zeros((4, 8, 8), dtype=np.float32)
    for lane in range(32):
        for i, p in enumerate(_m8n8k4_positions(lane, a_layout, b_layout)[3]):
            got[p] = raw[lane, i].view(np.float32)
    assert np.array_equal(got, expected)
