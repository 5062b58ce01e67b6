"""The references checked on their own, against values worked out by hand or taken from the
PTX ISA's text and examples, and the exact rounding against IEEE arithmetic that Python and
numpy do in hardware (round to nearest only). A wrong reference would otherwise pass or fail
cases for the wrong reason."""

from __future__ import annotations

import random
import struct
from fractions import Fraction

import numpy as np
import pytest

from tests.conformance.reference import fpops
from tests.conformance.reference.bitops import bfe, bfind, bmsk, fns, prmt, szext
from tests.conformance.reference.convert import to_integer
from tests.conformance.reference.ieee import (
    BF16,
    E4M3,
    E5M2,
    F16,
    F32,
    F64,
    TF32,
    round_to,
    value_of,
)
from tests.conformance.reference.video import part, simd
from tests.conformance.reference.warp import shfl


def _f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


@pytest.mark.parametrize("value, fmt, mode, bits", [
    (Fraction(1, 3), F32, "rn", 0x3EAAAAAB), (Fraction(1, 3), F32, "rz", 0x3EAAAAAA),
    (Fraction(-1, 3), F32, "rm", 0xBEAAAAAB), (Fraction(-1, 3), F32, "rp", 0xBEAAAAAA),
    (Fraction(2) ** 128, F32, "rn", 0x7F800000), (Fraction(2) ** 128, F32, "rz", 0x7F7FFFFF),
    (Fraction(1, 2 ** 150), F32, "rn", 0), (Fraction(3, 2 ** 150), F32, "rn", 0x00000002),
    (Fraction(1, 2 ** 150), F32, "rp", 0x00000001),
    (Fraction(65520), F16, "rn", 0x7C00), (Fraction(65519), F16, "rn", 0x7BFF),
    (Fraction(1) + Fraction(1, 256), BF16, "rn", 0x3F80),  # tie: to even
    (Fraction(1) + Fraction(3, 256), BF16, "rn", 0x3F82),
    (Fraction(1) + Fraction(1, 2048), TF32, "rna", 0x1FC01),  # tie: away from zero
    (Fraction(448), E4M3, "rn", 0x7E), (Fraction(1, 512), E4M3, "rn", 0x01),
    (Fraction(57344), E5M2, "rn", 0x7B), (Fraction(61440), E5M2, "rn", 0x7C),
])
def test_rounding_by_hand(value, fmt, mode, bits):
    assert round_to(value, fmt, mode) == bits


def test_satfinite_and_e4m3_specials():
    assert round_to(Fraction(10 ** 6), E4M3, satfinite=True) == 0x7E
    assert round_to(float("inf"), E5M2, satfinite=True) == 0x7B
    assert value_of(0x7F, E4M3) is value_of(0xFF, E4M3)  # both NaN
    assert value_of(0x7E, E4M3) == 448


def test_round_to_nearest_agrees_with_hardware_arithmetic():
    rng = random.Random(3)
    for _ in range(2000):
        a, b = rng.getrandbits(32), rng.getrandbits(32)
        x, y = np.uint32(a).view(np.float32), np.uint32(b).view(np.float32)
        with np.errstate(all="ignore"):
            expected = [int(v.view(np.uint32)) for v in (x + y, x * y, x / y)]
        found = [fpops.add(a, b, F32), fpops.mul(a, b, F32), fpops.div(a, b, F32)]
        for e, f in zip(expected, found, strict=True):
            e_nan = np.uint32(e).view(np.float32) != np.uint32(e).view(np.float32)
            f_nan = np.uint32(f).view(np.float32) != np.uint32(f).view(np.float32)
            assert e == f or (e_nan and f_nan), (hex(a), hex(b), hex(e), hex(f))
    for _ in range(500):
        a = rng.getrandbits(64)
        x = struct.unpack("<d", struct.pack("<Q", a))[0]
        if x > 0 and x != float("inf"):
            assert fpops.sqrt(a, F64) == struct.unpack("<Q", struct.pack("<d", x ** 0.5))[0]


def test_fma_is_one_rounding():
    # (1 + 2^-23) (1 - 2^-23) - 1 = -2^-46 exactly; unfused it would round to 0
    a, b, c = _f32(1 + 2 ** -23), _f32(1 - 2 ** -23), _f32(-1.0)
    assert fpops.fma(a, b, c, F32) == _f32(-(2.0 ** -46))
    assert fpops.add(fpops.mul(a, b, F32), c, F32) == 0


def test_signed_zero_of_exact_sums():
    assert fpops.add(_f32(1.0), _f32(-1.0), F32) == 0
    assert fpops.add(_f32(1.0), _f32(-1.0), F32, "rm") == 0x80000000
    assert fpops.add(0x80000000, 0x80000000, F32) == 0x80000000


def test_sat_ftz_and_minmax():
    assert fpops.add(_f32(0.75), _f32(0.5), F32, sat=True) == _f32(1.0)
    assert fpops.add(0x7FC00000, 0, F32, sat=True) == 0
    assert fpops.mul(0x00400000, _f32(1.0), F32, ftz=True) == 0
    assert fpops.min_(0x7FC00000, _f32(2.0), F32) == _f32(2.0)
    assert fpops.min_(0x7FC00000, _f32(2.0), F32, nan=True) == 0x7FFFFFFF
    assert fpops.max_(0, 0x80000000, F32) is None


@pytest.mark.parametrize("a, b, c, bits, signed_, d", [
    # PTX ISA bfe: the field past the msb reads as the sign bit for .s32
    (0xF0E1D2C3, 28, 8, 32, True, 0xFFFFFFFF), (0xF0E1D2C3, 28, 8, 32, False, 0xF),
    (0x12345678, 4, 8, 32, False, 0x67), (0x12345678, 0, 0, 32, True, 0),
    (0x80, 0, 8, 32, True, 0xFFFFFF80), (0xFFFFFFFF, 256, 4, 32, False, 0xF),
])
def test_bfe(a, b, c, bits, signed_, d):
    assert bfe(a, b, c, bits, signed_) == d


def test_bit_counting_and_masks():
    assert bfind(0x00010000, 32, False, False) == 16
    assert bfind(0x00010000, 32, False, True) == 15
    assert bfind(0xFFFFFFFF, 32, True, False) == 0xFFFFFFFF  # -1 has no non-sign bit
    assert bfind(0, 32, False, False) == 0xFFFFFFFF
    assert bmsk(24, 12, True) == 0xFF000000  # ZLUDA's bmsk_clamp_b32, run on CUDA hardware
    assert szext(0x80, 8, True, True) == 0xFFFFFF80 and szext(0x80, 8, True, False) == 0x80
    assert fns(0b10110, 0, 2) == 2 and fns(0b10110, 4, -2) == 2 and fns(0, 0, 1) == 0xFFFFFFFF


def test_prmt_against_hardware_constants():
    # ZLUDA's prmt and prmt_signext tests, whose expected values come from CUDA hardware
    assert prmt(0x70C507D6, 0x6FBD4B5C, 30212, None) == 0x6FBDD65C
    assert prmt(0x0100FE80, 0, 0x0A08, None) == 0x800080FF


def test_prmt_modes_by_hand():
    a, b = 0x44332211, 0x88776655  # bytes 0..7: 11 22 33 44 55 66 77 88
    assert prmt(a, b, 0, "f4e") == 0x44332211
    assert prmt(a, b, 1, "f4e") == 0x55443322
    assert prmt(a, b, 0, "b4e") == 0x66778811
    assert prmt(a, b, 3, "rc8") == 0x44444444
    assert prmt(a, b, 2, "ecl") == 0x44333333
    assert prmt(a, b, 2, "ecr") == 0x33332211
    assert prmt(a, b, 1, "rc16") == 0x44334433
    # selectors 8 (byte 0's sign, 0), 0xf (byte 7's sign, 1), 0, 0
    assert prmt(a, b, 0x00F8, None) == 0x1111FF00


def test_float_to_integer():
    assert to_integer(Fraction(5, 2), "rni", 32, True) == 2
    assert to_integer(Fraction(-5, 2), "rmi", 32, True) == -3
    assert to_integer(Fraction(2) ** 40, "rzi", 32, True) == 2 ** 31 - 1
    assert to_integer(float("-inf"), "rzi", 32, False) == 0
    assert to_integer(value_of(0x7FC00000, F32), "rni", 32, True) == 0


def test_shfl_and_video_against_the_isa_examples():
    values = list(range(100, 132))
    assert shfl(values, 5, "up", 1, 0) == (104, True)
    assert shfl(values, 0, "up", 1, 0) == (100, False)
    assert shfl(values, 31, "down", 1, 0x1F) == (131, False)
    assert shfl(values, 6, "bfly", 4, 0x1807) == (100 + (6 ^ 4), True)
    assert shfl(values, 10, "idx", 3, 0x1807) == (100 + 8 + 3, True)
    # ZLUDA's vshr_clamp: vshr.u32.u32.u32.clamp.add of (0x8e2da590, 16, 0x248a9f70)
    assert (part(0x8E2DA590, "u32") >> 16) + 0x248A9F70 == 613100957
    assert simd(0x00FF0001, 0x00010001, 0, 2, "add", "u32", True, False) == 0x01000002
