"""Conversions (PTX ISA 9.7.9.21 cvt): packing order of the paired forms, one rounding from
the exact value, the narrow float formats."""

from __future__ import annotations

import pytest

from tests.emu.ptx_kernels import scalar


def test_cvt_f16x2_f32_puts_a_in_the_upper_half():
    # 1.0 -> 0x3c00 (from a, upper half), 2.0 -> 0x4000 (from b, lower half)
    assert scalar("cvt.rn.f16x2.f32 %r9, 0f3F800000, 0f40000000;")[0] == 0x3C004000


def test_cvt_bf16x2_f32_puts_a_in_the_upper_half_and_relu_zeroes_negatives():
    # -1.0 -> relu 0 (upper), 1.5 -> 0x3fc0 (lower)
    assert scalar("cvt.rn.relu.bf16x2.f32 %r9, 0fBF800000, 0f3FC00000;")[0] == 0x00003FC0


def test_cvt_rz_bf16_truncates_and_rn_ties_to_even():
    # 0x3f808000 is halfway between bf16 0x3f80 and 0x3f81: rn -> 0x3f80 (even), rz -> 0x3f80
    # 0x3f818000 is halfway between 0x3f81 and 0x3f82: rn -> 0x3f82 (even), rz -> 0x3f81
    assert scalar("mov.b32 %f1, 0x3f818000; cvt.rn.bf16.f32 %rs1, %f1;"
                  "cvt.u32.u16 %r9, %rs1;")[0] == 0x3F82
    assert scalar("mov.b32 %f1, 0x3f818000; cvt.rz.bf16.f32 %rs1, %f1;"
                  "cvt.u32.u16 %r9, %rs1;")[0] == 0x3F81


def test_cvt_f16_nan_is_canonical_and_satfinite_clamps_infinity():
    assert scalar("mov.b32 %f1, 0x7fc00001; cvt.rn.f16.f32 %rs1, %f1;"
                  "cvt.u32.u16 %r9, %rs1;")[0] == 0x7FFF
    assert scalar("mov.b32 %f1, 0x7f800000; cvt.rn.satfinite.f16.f32 %rs1, %f1;"
                  "cvt.u32.u16 %r9, %rs1;")[0] == 0x7BFF


def test_cvt_e4m3x2_rounds_saturates_and_packs_a_high():
    # a = 448.0 + 100 saturates to 448 (0x7e); b = 0.3 rounds to 0.3125 = 1.25 * 2^-2
    # (exponent field 5, mantissa 2: 0x2a).
    assert scalar("cvt.rn.satfinite.e4m3x2.f32 %rs1, 0f44090000, 0f3E99999A;"
                  "cvt.u32.u16 %r9, %rs1;")[0] == 0x7E2A


def test_cvt_e4m3x2_nan_is_0x7f():
    assert scalar("mov.b32 %f1, 0x7fc00000; cvt.rn.satfinite.e4m3x2.f32 %rs1, %f1, 0f00000000;"
                  "cvt.u32.u16 %r9, %rs1;")[0] == 0x7F00


def test_cvt_f16x2_from_e5m2x2_is_exact_and_unpacks_high_to_high():
    # e5m2 0x3c is 1.0 (f16 0x3c00): e5m2 is the upper byte of an f16; 0xc0 is -2.0 (0xc000)
    assert scalar("mov.u16 %rs1, 0x3cc0; cvt.rn.f16x2.e5m2x2 %r9, %rs1;")[0] == 0x3C00C000


def test_cvt_e2m1x2_and_back():
    # 6.0 is e2m1 0x7, -0.5 is 0x9; decoding gives f16 6.0 (0x4600) and -0.5 (0xb800)
    assert scalar("cvt.rn.satfinite.e2m1x2.f32 %rc1, 0f41000000, 0fBF000000;"
                  "cvt.u32.u8 %r9, %rc1;")[0] == 0x79
    assert scalar("cvt.rn.satfinite.e2m1x2.f32 %rc1, 0f41000000, 0fBF000000;"
                  "cvt.rn.f16x2.e2m1x2 %r9, %rc1;")[0] == 0x4600B800


def test_cvt_rna_tf32_ties_away():
    # low 13 bits exactly half: rna rounds away from zero
    assert scalar("mov.b32 %f1, 0x3f801000; cvt.rna.tf32.f32 %r9, %f1;")[0] == 0x3F802000


def test_cvt_s64_to_f32_rounds_once():
    # 2^53 + 2^29 + 1 is above the f32 midpoint 2^53 + 2^29; rounding through f64 first
    # (to 2^53 + 2^29, a tie) would give 2^53 (even); the exact value rounds up.
    v = 2**53 + 2**29 + 1
    got = scalar(f"mov.u64 %rd2, {v}; cvt.rn.f32.s64 %f1, %rd2; mov.b32 %r9, %f1;")[0]
    assert got == 0x5A000001


@pytest.mark.parametrize("mode,expected", [("rz", 0x3F7FFFFF), ("rp", 0x3F800000),
                                           ("rm", 0x3F7FFFFF), ("rn", 0x3F800000)])
def test_cvt_f32_f64_directed_rounding(mode, expected):
    # 1 - 2^-30 lies between 0x3f7fffff (1 - 2^-24) and 1.0, nearer to 1.0.
    got = scalar(f"mov.b64 %fd1, 0x3FEFFFFFFFC00000; cvt.{mode}.f32.f64 %f1, %fd1;"
                 "mov.b32 %r9, %f1;")[0]
    assert got == expected


def test_cvt_float_to_int_nan_is_zero_and_saturates():
    assert scalar("mov.b32 %f1, 0x7fc00000; cvt.rni.s32.f32 %r9, %f1;")[0] == 0
    assert scalar("mov.b32 %f1, 0xcf800000; cvt.rzi.u32.f32 %r9, %f1;")[0] == 0


def test_cvt_pack_saturates_and_packs_a_above_b():
    assert scalar("cvt.pack.sat.s16.s32 %r9, 70000, -5;")[0] == 0x7FFFFFFB
    # %r9 = {c[15:0], sat(a), sat(b)} from the high byte down: c = 0x1234
    assert scalar("cvt.pack.sat.u8.s32.b32 %r9, 300, -1, 0x1234;")[0] == 0x1234FF00
    assert scalar("cvt.pack.sat.s4.s32.b32 %r9, 9, -9, 0;")[0] == 0x78


def test_nan_to_a_format_without_nan_is_unsupported_not_invented():
    from kernelcheck.errors import UnsupportedFeature
    with pytest.raises(UnsupportedFeature, match="NaN"):
        scalar("mov.b32 %f1, 0x7fc00000;"
               "cvt.rn.satfinite.e2m1x2.f32 %rc1, %f1, %f1; cvt.u32.u8 %r9, %rc1;")
