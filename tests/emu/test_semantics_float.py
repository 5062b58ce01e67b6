"""Float semantics at the edges: one rounding in every mode (fma included), NaN and signed
zero in min/max, flush-to-zero, saturation (PTX ISA 9.7.3, 9.7.4)."""

from __future__ import annotations

import pytest

from tests.emu.ptx_kernels import run_kernel, scalar


def f32(body: str) -> int:
    return int(scalar(body + " mov.b32 %r9, %f9;")[0])


def f64(body: str) -> int:
    raw = run_kernel(body + " st.global.f64 [%rd9], %fd3;", 1, out_words=2)[0]
    return int(raw[0]) | int(raw[1]) << 32


def test_fma_f32_rounds_once():
    # (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 is a tie at f32 precision; c = 2^-80 puts the exact
    # value above it, so it rounds up. Rounding a*b + c to float64 first loses c.
    assert f32("fma.rn.f32 %f9, 0f3F800800, 0f3F800800, 0f17800000;") == 0x3F801001
    assert f32("fma.rz.f32 %f9, 0f3F800800, 0f3F800800, 0f17800000;") == 0x3F801000


def test_fma_f64_rounds_once():
    # (1 + 2^-27)^2 - 1 = 2^-26 + 2^-54 exactly; a product rounded first gives 2^-26.
    assert f64("mov.b64 %fd1, 0x3FF0000002000000; mov.b64 %fd2, 0xBFF0000000000000;"
               "fma.rn.f64 %fd3, %fd1, %fd1, %fd2;") == 0x3E50000001000000


def test_fma_f16_rounds_once():
    # (1 + 2^-6)(1 + 2^-5) = 1 + 2^-5 + 2^-6 + 2^-11, a tie at f16 precision; c = 2^-24 (the
    # smallest subnormal) breaks it upward.
    got = scalar("mov.b16 %rs1, 0x3c10; mov.b16 %rs2, 0x3c20; mov.b16 %rs3, 0x0001;"
                 "fma.rn.f16 %rs4, %rs1, %rs2, %rs3; cvt.u32.u16 %r9, %rs4;")[0]
    assert got == 0x3C31


@pytest.mark.parametrize("mode,expected", [("rn", 0x3FF0000000000000),
                                           ("rz", 0x3FF0000000000000),
                                           ("rm", 0x3FF0000000000000),
                                           ("rp", 0x3FF0000000000001)])
def test_add_f64_directed_rounding(mode, expected):
    assert f64(f"mov.b64 %fd1, 0x3FF0000000000000; mov.b64 %fd2, 0x3C30000000000000;"
               f"add.{mode}.f64 %fd3, %fd1, %fd2;") == expected


@pytest.mark.parametrize("mode,expected", [("rn", 0x3FD5555555555555),
                                           ("rz", 0x3FD5555555555555),
                                           ("rp", 0x3FD5555555555556)])
def test_div_f64_directed_rounding(mode, expected):
    assert f64(f"mov.b64 %fd1, 0x3FF0000000000000; mov.b64 %fd2, 0x4008000000000000;"
               f"div.{mode}.f64 %fd3, %fd1, %fd2;") == expected


@pytest.mark.parametrize("mode,expected", [("rn", 0x3FB504F3), ("rz", 0x3FB504F3),
                                           ("rp", 0x3FB504F4)])
def test_sqrt_f32_rounding(mode, expected):
    assert f32(f"sqrt.{mode}.f32 %f9, 0f40000000;") == expected


def test_add_rm_f32_far_apart():
    assert f32("add.rm.f32 %f9, 0f3F800000, 0fAB800000;") == 0x3F7FFFFF
    assert f32("add.rn.f32 %f9, 0f3F800000, 0fAB800000;") == 0x3F800000


@pytest.mark.parametrize("body,expected", [
    ("min.f32 %f9, 0f80000000, 0f00000000;", 0x80000000),
    ("min.f32 %f9, 0f00000000, 0f80000000;", 0x80000000),
    ("max.f32 %f9, 0f80000000, 0f00000000;", 0x00000000),
    ("min.f32 %f9, 0f7FC00001, 0f3F800000;", 0x3F800000),
    ("max.f32 %f9, 0f7FC00001, 0f7FC00002;", 0x7FFFFFFF),
    ("min.NaN.f32 %f9, 0f3F800000, 0f7FC00001;", 0x7FFFFFFF),
    ("abs.f32 %f9, 0fFFC00001;", 0x7FC00001),
    ("neg.f32 %f9, 0f7FC00001;", 0xFFC00001),
    ("add.ftz.f32 %f9, 0f00000001, 0f00000000;", 0x00000000),
    ("add.f32 %f9, 0f00000001, 0f00000000;", 0x00000001),
    ("mul.ftz.f32 %f9, 0f00800000, 0f3F000000;", 0x00000000),
    ("mul.f32 %f9, 0f00800000, 0f3F000000;", 0x00400000),
    ("add.sat.f32 %f9, 0f7FC00000, 0f3F800000;", 0x00000000),
    ("add.sat.f32 %f9, 0f3F800000, 0f3F000000;", 0x3F800000),
    ("add.f32 %f9, 0f7FC00001, 0f3F800000;", 0x7FFFFFFF),
])
def test_f32_edges(body, expected):
    assert f32(body) == expected


def test_half_pairs_compute_per_half_with_canonical_nan():
    # lower halves: 1.0 + 1.0 = 2.0 (0x4000); upper halves: NaN + 1.0 -> 0x7fff
    assert scalar("add.rn.f16x2 %r9, 0x7e013c00, 0x3c003c00;")[0] == 0x7FFF4000
    # min with -0/+0 per half, and bf16x2 max
    assert scalar("min.f16x2 %r9, 0x80000000, 0x00008000;")[0] == 0x80008000
    assert scalar("max.bf16x2 %r9, 0x3f80c000, 0x40000000;")[0] == 0x40000000


def test_fma_relu_bf16():
    # -1 * 2 + 0.5 = -1.5 -> 0 with .relu
    got = scalar("mov.b16 %rs1, 0xbf80; mov.b16 %rs2, 0x4000; mov.b16 %rs3, 0x3f00;"
                 "fma.rn.relu.bf16 %rs4, %rs1, %rs2, %rs3; cvt.u32.u16 %r9, %rs4;")[0]
    assert got == 0
