"""Binary floating point from first principles: exact values, rounded by the rules of IEEE 754.

The conformance references compute every floating-point result as an exact rational number
(:class:`fractions.Fraction`) and round it here, in the rounding mode the instruction names.
Nothing comes from numpy's or the C library's arithmetic, so a reference cannot share a
rounding bug with the emulator. PTX ISA 8.6 / 9.7.3 "Floating-Point Instructions" defines
``.rn`` (nearest, ties to even), ``.rz`` (toward zero), ``.rm`` (toward -inf), ``.rp``
(toward +inf); ``.rna`` (nearest, ties away from zero) is that of ``cvt.rna.tf32.f32``.

A :class:`Format` is a sign, ``exponent_bits`` and ``mantissa_bits``; ``ieee=False`` marks
OCP FP8 E4M3 (no infinities, S.1111.111 is NaN, largest finite 448), ``finite=True`` the OCP
FP6 and FP4 formats E2M3, E3M2 and E2M1, in which every pattern is a number (no infinities,
no NaN; PTX ISA 5.2.5.2 "Alternate floating point data formats"). The PTX conversions to these
always saturate (``.satfinite``), so rounding to them clamps to the largest finite value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["Format", "F16", "BF16", "TF32", "F32", "F64", "E4M3", "E5M2", "E2M1", "E2M3",
           "E3M2", "NAN", "value_of",
           "round_to", "is_nan", "is_inf", "canonical_nan", "Value"]


@dataclass(frozen=True)
class Format:
    name: str
    exponent_bits: int
    mantissa_bits: int
    ieee: bool = True  # False: E4M3, with no infinities and one NaN pattern per sign
    finite: bool = False  # True: E2M1, E2M3, E3M2, every pattern a finite number

    @property
    def width(self) -> int:
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def bias(self) -> int:
        return (1 << (self.exponent_bits - 1)) - 1

    @property
    def min_exponent(self) -> int:
        """Exponent of the smallest normal number."""
        return 1 - self.bias

    @property
    def max_finite(self) -> Fraction:
        if self.finite:
            top = (1 << self.exponent_bits) - 1
            mantissa = (1 << self.mantissa_bits) - 1
        elif self.ieee:
            top = (1 << self.exponent_bits) - 2
            mantissa = (1 << self.mantissa_bits) - 1
        else:  # E4M3: exponent field all ones is used, mantissa all ones is NaN
            top = (1 << self.exponent_bits) - 1
            mantissa = (1 << self.mantissa_bits) - 2
        return Fraction((1 << self.mantissa_bits) + mantissa, 1 << self.mantissa_bits) * \
            _pow2(top - self.bias)


F16 = Format("f16", 5, 10)
BF16 = Format("bf16", 8, 7)
TF32 = Format("tf32", 8, 10)  # held in 32 bits: the 13 low bits of the f32 pattern are 0
F32 = Format("f32", 8, 23)
F64 = Format("f64", 11, 52)
E4M3 = Format("e4m3", 4, 3, ieee=False)
E5M2 = Format("e5m2", 5, 2)
E2M1 = Format("e2m1", 2, 1, finite=True)
E2M3 = Format("e2m3", 2, 3, finite=True)
E3M2 = Format("e3m2", 3, 2, finite=True)


class _Nan:
    def __repr__(self) -> str:
        return "NAN"


#: The value "not a number" (payloads are not modelled by the references).
NAN = _Nan()

#: An exact value: a Fraction, +-inf as float, NAN, or a signed zero as (0.0 or -0.0) float.
Value = Fraction | float | _Nan


def _pow2(k: int) -> Fraction:
    return Fraction(1 << k) if k >= 0 else Fraction(1, 1 << -k)


def is_nan(v: Value) -> bool:
    return v is NAN


def is_inf(v: Value) -> bool:
    return isinstance(v, float) and math.isinf(v)


def canonical_nan(fmt: Format) -> int:
    """The bit pattern PTX calls the canonical NaN (all exponent and mantissa bits set)."""
    return (1 << (fmt.width - 1)) - 1


def value_of(bits: int, fmt: Format) -> Value:
    """The exact value of a bit pattern: a Fraction, +-inf, NAN, or a signed zero (float).

    >>> value_of(0x3f800000, F32), value_of(0x8000, F16), value_of(0x7e, E4M3)
    (Fraction(1, 1), -0.0, Fraction(448, 1))
    """
    sign = (bits >> (fmt.width - 1)) & 1
    exponent = (bits >> fmt.mantissa_bits) & ((1 << fmt.exponent_bits) - 1)
    mantissa = bits & ((1 << fmt.mantissa_bits) - 1)
    top = (1 << fmt.exponent_bits) - 1
    if fmt.finite:
        pass
    elif fmt.ieee and exponent == top:
        if mantissa:
            return NAN
        return -math.inf if sign else math.inf
    if not fmt.ieee and exponent == top and mantissa == (1 << fmt.mantissa_bits) - 1:
        return NAN
    if exponent == 0 and mantissa == 0:
        return -0.0 if sign else 0.0
    if exponent == 0:
        magnitude = Fraction(mantissa, 1 << fmt.mantissa_bits) * _pow2(fmt.min_exponent)
    else:
        magnitude = Fraction((1 << fmt.mantissa_bits) + mantissa, 1 << fmt.mantissa_bits) * \
            _pow2(exponent - fmt.bias)
    return -magnitude if sign else magnitude


def round_to(value: Value, fmt: Format, mode: str = "rn", *, ftz: bool = False,
             satfinite: bool = False, zero_sign: int = 0) -> int:
    """The bit pattern of ``value`` rounded to ``fmt`` in ``mode`` (rn, rz, rm, rp, rna).

    ``zero_sign`` gives the sign of an exact zero Fraction (IEEE 754 6.3: the sign of an
    exact zero sum depends on the operation, which the caller knows). ``ftz`` flushes a
    subnormal result to zero of the same sign (PTX ``.ftz``). ``satfinite`` turns an
    overflow into the largest finite value of that sign and NaN into NaN (PTX ``.satfinite``).

    >>> hex(round_to(Fraction(1, 3), F32)), hex(round_to(Fraction(1, 3), F32, "rp"))
    ('0x3eaaaaab', '0x3eaaaaab')
    >>> hex(round_to(Fraction(1, 3), F32, "rz"))
    '0x3eaaaaaa'
    """
    sign_bit = 1 << (fmt.width - 1)
    if value is NAN:
        if fmt.finite:
            raise ValueError(f"{fmt.name} has no NaN")
        return canonical_nan(fmt) if fmt.ieee else (1 << (fmt.width - 1)) - 1
    if fmt.finite:
        satfinite = True
    if isinstance(value, float):
        if math.isinf(value):
            sign = sign_bit if value < 0 else 0
            if satfinite or not fmt.ieee:
                return sign | _bits_of_magnitude(fmt.max_finite, fmt)
            return sign | _inf_bits(fmt)
        if value == 0:
            return sign_bit if math.copysign(1.0, value) < 0 else 0
        value = Fraction(value)
    if value == 0:
        return sign_bit if zero_sign else 0
    negative = value < 0
    sign = sign_bit if negative else 0
    magnitude = -value if negative else value
    # The directed modes in terms of the magnitude: away from zero or toward it.
    if mode == "rm":
        direction = "up" if negative else "down"
    elif mode == "rp":
        direction = "down" if negative else "up"
    elif mode == "rz":
        direction = "down"
    elif mode in ("rn", "rna"):
        direction = mode
    else:
        raise ValueError(f"unknown rounding mode {mode!r}")
    # quantum: the spacing of representable numbers at this magnitude
    exponent = _floor_log2(magnitude)
    exponent = max(exponent, fmt.min_exponent)
    quantum = _pow2(exponent - fmt.mantissa_bits)
    scaled = magnitude / quantum
    low = math.floor(scaled)
    remainder = scaled - low
    if remainder == 0:
        units = low
    elif direction == "down":
        units = low
    elif direction == "up":
        units = low + 1
    elif remainder > Fraction(1, 2):
        units = low + 1
    elif remainder < Fraction(1, 2):
        units = low
    elif direction == "rna":
        units = low + 1
    else:
        units = low + (low & 1)
    rounded = units * quantum
    if rounded > fmt.max_finite:
        # Overflow: nearest modes go to infinity; directed modes toward zero stop at the
        # largest finite number (IEEE 754 7.4).
        if satfinite or not fmt.ieee or direction == "down":
            if not fmt.ieee and not satfinite and direction != "down":
                return sign | ((1 << (fmt.width - 1)) - 1)  # E4M3 overflow without satfinite
            return sign | _bits_of_magnitude(fmt.max_finite, fmt)
        return sign | _inf_bits(fmt)
    if rounded == 0:
        return sign
    if ftz and rounded < _pow2(fmt.min_exponent):
        return sign
    return sign | _bits_of_magnitude(rounded, fmt)


def _inf_bits(fmt: Format) -> int:
    return ((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits


def _floor_log2(x: Fraction) -> int:
    """floor(log2(x)) for x > 0, exactly."""
    n, d = x.numerator, x.denominator
    k = n.bit_length() - d.bit_length()
    if _pow2(k) > x:
        k -= 1
    elif _pow2(k + 1) <= x:
        k += 1
    return k


def _bits_of_magnitude(magnitude: Fraction, fmt: Format) -> int:
    """The pattern of a positive representable magnitude."""
    if magnitude < _pow2(fmt.min_exponent):
        mantissa = magnitude / _pow2(fmt.min_exponent - fmt.mantissa_bits)
        assert mantissa.denominator == 1
        return int(mantissa)
    exponent = _floor_log2(magnitude)
    fraction = magnitude / _pow2(exponent - fmt.mantissa_bits) - (1 << fmt.mantissa_bits)
    assert fraction.denominator == 1, magnitude
    return ((exponent + fmt.bias) << fmt.mantissa_bits) | int(fraction)
