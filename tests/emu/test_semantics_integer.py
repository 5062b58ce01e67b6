"""Integer semantics at the edges: the carry flag of subtraction chains, bit-field and
bit-search instructions, saturation (PTX ISA 9.7.1, 9.7.2)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.emu.ptx_kernels import scalar

PAIRS = [(0x0000000100000000, 1), (5, 7), (0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF),
         (0, 0xFFFFFFFF), (0x8000000000000000, 0x7FFFFFFFFFFFFFFF), (123456789, 123456789)]


@pytest.mark.parametrize("a,b", PAIRS)
def test_sub_cc_subc_chain_is_a_64_bit_subtraction(a, b):
    body = (f"mov.u32 %r2, {a & 0xFFFFFFFF}; mov.u32 %r3, {a >> 32};"
            f"mov.u32 %r4, {b & 0xFFFFFFFF}; mov.u32 %r5, {b >> 32};"
            "sub.cc.u32 %r6, %r2, %r4; subc.u32 %r7, %r3, %r5;"
            "mov.b64 %rd2, {%r6, %r7}; st.global.u64 [%rd9], %rd2;")
    from tests.emu.ptx_kernels import run_kernel
    got = run_kernel(body, 1, out_words=2)[0]
    assert int(got[0]) | int(got[1]) << 32 == (a - b) % 2**64


@pytest.mark.parametrize("a,b,no_borrow", [(5, 3, 1), (3, 5, 0), (7, 7, 1), (0, 1, 0),
                                          (0xFFFFFFFF, 0, 1)])
def test_sub_cc_leaves_the_carry_of_a_plus_not_b_plus_one(a, b, no_borrow):
    # CC.CF after sub.cc is 1 exactly when no borrow occurs (ISA 9.7.2.3, as executed by
    # the hardware): addc reads it as a carry, subc as "no borrow".
    assert scalar(f"sub.cc.u32 %r2, {a}, {b}; addc.u32 %r9, 0, 0;")[0] == no_borrow
    assert scalar(f"sub.cc.u32 %r2, {a}, {b}; subc.u32 %r9, 0, 0;")[0] == (
        0 if no_borrow else 0xFFFFFFFF)


def test_three_word_subtraction_borrows_through_the_middle_word():
    # 0x1_00000000_00000000 - 1 = 0x0_FFFFFFFF_FFFFFFFF
    from tests.emu.ptx_kernels import run_kernel
    body = ("sub.cc.u32 %r2, 0, 1; subc.cc.u32 %r3, 0, 0; subc.u32 %r4, 1, 0;"
            "st.global.v2.u32 [%rd9], {%r2, %r3}; st.global.u32 [%rd9+8], %r4;")
    got = run_kernel(body, 1, out_words=3)[0]
    assert got.tolist() == [0xFFFFFFFF, 0xFFFFFFFF, 0]


def test_add_cc_addc_still_propagates_the_carry():
    assert scalar("add.cc.u32 %r2, 0xFFFFFFFF, 1; addc.u32 %r9, 0, 0;")[0] == 1
    assert scalar("add.cc.u32 %r2, 0xFFFFFFFE, 1; addc.u32 %r9, 0, 0;")[0] == 0


def test_mad_hi_sat_clamps_instead_of_wrapping():
    # hi(0x7fffffff * 0x7fffffff) = 0x3fffffff; + 0x7fffffff overflows -> INT_MAX.
    assert scalar("mad.hi.sat.s32 %r9, 0x7fffffff, 0x7fffffff, 0x7fffffff;")[0] == 0x7FFFFFFF
    assert scalar("mad.hi.s32 %r9, 0x7fffffff, 0x7fffffff, 0x7fffffff;")[0] == 0xBFFFFFFE


@pytest.mark.parametrize("a,b,mode,expected", [
    (1, 2, "wrap", 0x6), (0, 32, "wrap", 0x0), (0, 32, "clamp", 0xFFFFFFFF),
    (8, 0, "clamp", 0x0), (33, 2, "wrap", 0x6), (33, 2, "clamp", 0x0), (30, 4, "wrap", 0xC0000000),
])
def test_bmsk(a, b, mode, expected):
    assert scalar(f"bmsk.{mode}.b32 %r9, {a}, {b};")[0] == expected


@pytest.mark.parametrize("ty,a,b,mode,expected", [
    ("s32", 0x80, 8, "wrap", 0xFFFFFF80), ("u32", 0x180, 8, "wrap", 0x80),
    ("s32", 0x12345678, 0, "wrap", 0), ("s32", 0x12345678, 32, "wrap", 0),
    ("s32", 0x80, 40, "clamp", 0x80),
    ("s32", 0x80, 40, "wrap", 0xFFFFFF80),
])
def test_szext(ty, a, b, mode, expected):
    assert scalar(f"szext.{mode}.{ty} %r9, {a}, {b};")[0] == expected


@pytest.mark.parametrize("mask,base,offset,expected", [
    (0b10110, 0, 1, 1), (0b10110, 0, 2, 2), (0b10110, 0, 3, 4), (0b10110, 0, 4, 0xFFFFFFFF),
    (0b10110, 4, -2, 2), (0b10110, 3, 0, 0xFFFFFFFF), (0b10110, 2, 0, 2),
    (0x80000000, 0, 1, 31),
])
def test_fns(mask, base, offset, expected):
    assert scalar(f"fns.b32 %r9, {mask}, {base}, {offset};")[0] == expected


@pytest.mark.parametrize("shift,expected_shl,expected_shr_s", [
    (0, 0x80000001, 0x80000001), (31, 0x80000000, 0xFFFFFFFF), (32, 0, 0xFFFFFFFF),
    (200, 0, 0xFFFFFFFF)])
def test_shifts_at_and_past_the_width(shift, expected_shl, expected_shr_s):
    # ISA 9.7.8.7-8: shift amounts past the width clamp (shl gives 0, shr.s the sign fill).
    assert scalar(f"shl.b32 %r9, 0x80000001, {shift};")[0] == expected_shl
    assert scalar(f"shr.s32 %r9, 0x80000001, {shift};")[0] == expected_shr_s


def test_shf_clamp_and_wrap():
    # shf.l.clamp with n >= 32 gives b (the high word) whole; .wrap takes n mod 32.
    assert scalar("shf.l.clamp.b32 %r9, 0x11111111, 0x22222222, 40;")[0] == 0x11111111
    assert scalar("shf.l.wrap.b32 %r9, 0x80000000, 0x00000001, 33;")[0] == 0x00000003
    assert scalar("shf.r.clamp.b32 %r9, 0x11111111, 0x22222222, 32;")[0] == 0x22222222


def test_add_sat_s32_clamps():
    assert scalar("add.sat.s32 %r9, 0x7fffffff, 1;")[0] == 0x7FFFFFFF
    assert np.uint32(scalar("sub.sat.s32 %r9, 0x80000000, 1;")[0]) == 0x80000000
