"""Narrow float formats and exact rounding: f16, bf16, tf32 and the fp8/fp6/fp4 formats.

Every conversion here rounds *once* from the exact value. Values are carried as float64; a
float64 that is itself rounded (a product of two float64, a sum far apart in exponent) is
first rounded *to odd* (:func:`to_odd`), which makes the final rounding to any format of at
most 51 significand bits exact in every rounding mode (Boldo and Melquiond, "When double
rounding is odd", 2005): the odd last bit remembers that the value was not exact.

The minifloat formats follow PTX ISA 5.2.5.x "Alternate Floating-Point Data Formats" and
9.7.9.21 cvt: ``e4m3`` (bias 7, no infinity, S.1111.111 is NaN, largest 448), ``e5m2`` (bias
15, IEEE-like with infinity, largest 57344), ``e2m3`` (bias 1, largest 7.5), ``e3m2``
(bias 3, largest 28), ``e2m1`` (bias 1, largest 6); the last three have no NaN or infinity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["to_odd", "two_sum", "two_prod", "directed", "round_float", "to_bf16",
           "to_tf32", "MiniFloat", "MINIFLOATS", "encode_minifloat", "decode_minifloat",
           "CANONICAL_NAN", "NaNConversion"]

_F64 = np.float64

#: Canonical NaN bit patterns (PTX ISA 9.7.3 "NaN results are canonical": 0x7fffffff for
#: f32, 0x7fff for f16 and bf16).
CANONICAL_NAN = {"f32": 0x7FFFFFFF, "f16": 0x7FFF, "bf16": 0x7FFF, "tf32": 0x7FFFFFFF}


class NaNConversion(ArithmeticError):
    """A NaN converted to a format that has no NaN (e2m1, e2m3, e3m2): the PTX ISA gives
    no result, so the emulator stops rather than invent one."""


def two_sum(a, b):
    """``(s, e)`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth's TwoSum)."""
    a = np.asarray(a, _F64)
    b = np.asarray(b, _F64)
    with np.errstate(all="ignore"):
        s = a + b
        bb = s - a
        e = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), e, 0.0)


_SPLIT = _F64(134217729.0)  # 2**27 + 1


def _split(a):
    with np.errstate(all="ignore"):
        c = _SPLIT * a
        hi = c - (c - a)
    return hi, a - hi


def two_prod(a, b):
    """``(p, e)`` with ``p = fl(a * b)`` and ``a * b = p + e`` exactly (Dekker's product,
    exact unless the product or a partial product overflows or underflows)."""
    a = np.asarray(a, _F64)
    b = np.asarray(b, _F64)
    with np.errstate(all="ignore"):
        p = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, np.where(np.isfinite(p) & np.isfinite(e), e, 0.0)


def to_odd(s, err):
    """Round-to-odd of the exact value ``s + err`` (``s`` its float64 rounding to nearest):
    ``s`` when exact, else the neighbour of ``s`` toward the exact value whose last bit is 1."""
    s = np.asarray(s, _F64)
    err = np.asarray(err, _F64)
    bits = s.view(np.uint64) if s.ndim else np.asarray([s]).view(np.uint64)[0]
    even = (np.asarray(bits) & np.uint64(1)) == 0
    fix = (err != 0) & even & np.isfinite(s)
    if not np.any(fix):
        return s
    toward = np.where(err > 0, np.inf, -np.inf)
    return np.where(fix, np.nextafter(s, toward), s)


def directed(s, err, mode: str):
    """The float64 result in rounding ``mode`` of the exact value ``s + err`` (``s`` rounded
    to nearest): the directed result is ``s`` or its neighbour on the side of ``err``."""
    s = np.asarray(s, _F64)
    if mode in ("rn", ""):
        return s
    err = np.asarray(err, _F64)
    if mode == "rm":
        step = err < 0
    elif mode == "rp":
        step = err > 0
    elif mode == "rz":
        step = ((s > 0) & (err < 0)) | ((s < 0) & (err > 0))
    else:
        raise ValueError(mode)
    if not np.any(step):
        return s
    toward = np.where(err > 0, np.inf, -np.inf)
    with np.errstate(over="ignore"):  # the step past the largest finite value is infinity
        return np.where(step, np.nextafter(s, toward), s)


def round_float(exact, dtype, mode: str):
    """Round float64 values (exact, or rounded to odd) to ``dtype`` (float16/32) in ``mode``.

    IEEE 754 rounding: ``rn`` ties to even and overflows to infinity; ``rz`` and the directed
    modes overflow to the largest finite value when rounding toward it.
    """
    dtype = np.dtype(dtype)
    exact = np.asarray(exact, _F64)
    with np.errstate(all="ignore"):
        nearest = exact.astype(dtype)
    if mode in ("rn", ""):
        return nearest
    back = nearest.astype(_F64)
    finite = np.isfinite(exact)
    if mode == "rz":
        step = (np.abs(back) > np.abs(exact)) & finite
        toward = np.zeros_like(nearest)
    elif mode == "rm":
        step = (back > exact) & finite
        toward = np.full_like(nearest, -np.inf)
    elif mode == "rp":
        step = (back < exact) & finite
        toward = np.full_like(nearest, np.inf)
    else:
        raise ValueError(mode)
    return np.where(step, np.nextafter(nearest, toward), nearest).astype(dtype)


def to_bf16(exact, mode: str = "rn"):
    """bf16 bit patterns (uint16) of float64 values, rounded once in ``mode``.

    NaN stays NaN (its sign and high payload kept, quiet bit set).
    """
    exact = np.asarray(exact, _F64)
    with np.errstate(all="ignore"):
        f = exact.astype(np.float32)
    # Round to odd at float32 (24 bits >= 8 + 2), then round the bits once.
    inexact = np.isfinite(exact) & (f.astype(_F64) != exact)
    bits = np.asarray(f).view(np.uint32) if f.ndim else np.asarray([f]).view(np.uint32)
    bits = bits.reshape(np.shape(f))
    odd_fix = inexact & ((bits & np.uint32(1)) == 0)
    toward = np.where(exact > f.astype(_F64), np.float32(np.inf), np.float32(-np.inf))
    f = np.where(odd_fix, np.nextafter(f, toward), f).astype(np.float32)
    bits = np.asarray(f).view(np.uint32).reshape(np.shape(f))
    hi = (bits >> np.uint32(16)).astype(np.uint32)
    lo = bits & np.uint32(0xFFFF)
    negative = (bits >> np.uint32(31)) == 1
    if mode == "rn":
        up = (lo > 0x8000) | ((lo == 0x8000) & ((hi & np.uint32(1)) == 1))
    elif mode == "rz":
        up = np.zeros(np.shape(f), bool)
    elif mode == "rm":
        up = (lo != 0) & negative
    elif mode == "rp":
        up = (lo != 0) & ~negative
    else:
        raise ValueError(mode)
    out = (hi + up.astype(np.uint32)).astype(np.uint16)
    nan = np.isnan(exact)
    if np.any(nan):
        out = np.where(nan, (hi | np.uint32(0x40)).astype(np.uint16), out)
    if mode in ("rz", "rm", "rp"):
        # Rounding toward zero (or away from an infinity) never overflows to infinity.
        big = np.isfinite(exact) & ((out & np.uint16(0x7FFF)) == 0x7F80)
        keep = big & ~(((mode == "rp") & ~negative) | ((mode == "rm") & negative))
        out = np.where(keep, out - np.uint16(1), out)
    return out


def to_tf32(x, mode: str):
    """tf32 results of float32 values as float32 bit patterns with the 13 low bits zero
    (ISA 9.7.9.21: ``.rna`` ties away from zero, ``.rn`` ties to even, ``.rz`` truncates)."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    low = bits & np.uint32(0x1FFF)
    base = bits & ~np.uint32(0x1FFF)
    if mode == "rna":
        up = low >= 0x1000
    elif mode == "rn":
        up = (low > 0x1000) | ((low == 0x1000) & ((bits >> np.uint32(13)) & np.uint32(1) == 1))
    elif mode == "rz":
        up = np.zeros(bits.shape, bool)
    else:
        raise ValueError(mode)
    out = base + (up.astype(np.uint32) << np.uint32(13))
    nan = np.isnan(np.asarray(x, np.float32))
    return np.where(nan, np.uint32(CANONICAL_NAN["tf32"]), out).astype(np.uint32)


@dataclass(frozen=True)
class MiniFloat:
    """An 8-bit-or-narrower float format: exponent and mantissa bits, bias, largest finite
    value, and its NaN and infinity codes (``None`` when the format has none)."""

    name: str
    ebits: int
    mbits: int
    bias: int
    max_finite: float
    nan: int | None
    inf: int | None


MINIFLOATS = {
    "e4m3": MiniFloat("e4m3", 4, 3, 7, 448.0, 0x7F, None),
    "e5m2": MiniFloat("e5m2", 5, 2, 15, 57344.0, 0x7F, 0x7C),
    "e2m3": MiniFloat("e2m3", 2, 3, 1, 7.5, None, None),
    "e3m2": MiniFloat("e3m2", 3, 2, 3, 28.0, None, None),
    "e2m1": MiniFloat("e2m1", 2, 1, 1, 6.0, None, None),
}


def encode_minifloat(x, fmt: MiniFloat, relu: bool = False) -> np.ndarray:
    """Codes of float64 values in ``fmt``, round to nearest even with ``.satfinite`` (the only
    forms the ISA has): finite magnitudes past the largest value, and infinities, become
    the largest finite value of their sign; NaN becomes the format's NaN (``0x7f`` for
    e4m3/e5m2); ``relu`` makes negative results +0 (ISA 9.7.9.21)."""
    x = np.asarray(x, _F64)
    nan = np.isnan(x)
    if np.any(nan) and fmt.nan is None:
        raise NaNConversion(f"NaN converted to .{fmt.name}, which has no NaN")
    sign = np.signbit(x)
    a = np.where(nan, 0.0, np.abs(x))
    a = np.minimum(a, fmt.max_finite)
    min_exp = 1 - fmt.bias
    _, e = np.frexp(np.where(a == 0, 1.0, a))
    exp = np.maximum(e - 1, min_exp)
    quantum = np.ldexp(1.0, exp - fmt.mbits)
    r = np.minimum(np.rint(a / quantum) * quantum, fmt.max_finite)
    _, e2 = np.frexp(np.where(r == 0, 1.0, r))
    exp2 = e2 - 1
    normal = (r != 0) & (exp2 >= min_exp)
    field = np.where(normal, exp2 + fmt.bias, 0)
    mant = np.where(normal, np.ldexp(r, -exp2) - 1.0, np.ldexp(r, -(min_exp - fmt.mbits)))
    mant = np.where(normal, mant * (1 << fmt.mbits), mant)
    code = (field.astype(np.int64) << fmt.mbits) | np.rint(mant).astype(np.int64)
    if relu:
        sign = sign & False
        code = np.where(np.signbit(x) & ~nan, 0, code)
    code = code | (sign.astype(np.int64) << (fmt.ebits + fmt.mbits))
    if fmt.nan is not None:
        code = np.where(nan, fmt.nan, code)
    return code.astype(np.uint32)


def decode_minifloat(code, fmt: MiniFloat) -> np.ndarray:
    """float64 values of ``fmt`` codes (exact)."""
    code = np.asarray(code).astype(np.int64)
    width = fmt.ebits + fmt.mbits
    sign = (code >> width) & 1
    field = (code >> fmt.mbits) & ((1 << fmt.ebits) - 1)
    mant = code & ((1 << fmt.mbits) - 1)
    min_exp = 1 - fmt.bias
    value = np.where(field == 0, np.ldexp(mant.astype(_F64), min_exp - fmt.mbits),
                     np.ldexp(1.0 + mant / (1 << fmt.mbits), field - fmt.bias))
    if fmt.name == "e4m3":
        value = np.where((field == 15) & (mant == 7), np.nan, value)
    elif fmt.name == "e5m2":
        value = np.where(field == 31, np.where(mant == 0, np.inf, np.nan), value)
    return np.where(sign == 1, -value, value)
