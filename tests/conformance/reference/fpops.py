"""IEEE 754 operations on bit patterns, rounded exactly (on top of :mod:`.ieee`).

Each function takes operand bit patterns and returns the result's bit pattern in the same
format. They follow IEEE 754-2019 for special values (chapter 6, 7) and the PTX ISA for its
modifiers: ``ftz`` flushes subnormal inputs and results to zero keeping the sign, ``sat``
clamps to [0.0, 1.0] with NaN giving +0.0 (PTX ISA 9.7.3 "Floating-Point Instructions",
"Saturation modifier"). NaN results are the canonical NaN; the cases compare NaNs as NaNs
("nan": "any") wherever the ISA does not fix the payload.
"""

from __future__ import annotations

import math
from fractions import Fraction

from tests.conformance.reference.ieee import (
    NAN,
    Format,
    _floor_log2,
    _pow2,
    canonical_nan,
    round_to,
    value_of,
)

__all__ = ["decode", "add", "sub", "mul", "fma", "div", "sqrt", "saturate", "sign_of",
           "min_", "max_", "flush", "negate", "absolute", "compare"]


def sign_of(v) -> int:
    """1 for negative values (and -0.0, -inf), 0 otherwise; NaN counts as positive."""
    if v is NAN:
        return 0
    if isinstance(v, float):
        return 1 if math.copysign(1.0, v) < 0 else 0
    return 1 if v < 0 else 0


def flush(bits: int, fmt: Format) -> int:
    """A subnormal pattern flushed to zero of the same sign (PTX ``.ftz``)."""
    exponent = (bits >> fmt.mantissa_bits) & ((1 << fmt.exponent_bits) - 1)
    if exponent == 0:
        return bits & (1 << (fmt.width - 1))
    return bits


def decode(bits: int, fmt: Format, ftz: bool = False):
    return value_of(flush(bits, fmt) if ftz else bits, fmt)


def _finish(value, fmt: Format, mode: str, ftz: bool, sat: bool, zero_sign: int = 0) -> int:
    if sat:
        return saturate(round_to(value, fmt, mode, ftz=ftz, zero_sign=zero_sign), fmt)
    return round_to(value, fmt, mode, ftz=ftz, zero_sign=zero_sign)


def saturate(bits: int, fmt: Format) -> int:
    """Clamp a result to [0.0, 1.0]; NaN becomes +0.0 (PTX ISA .sat)."""
    v = value_of(bits, fmt)
    if v is NAN:
        return 0
    if isinstance(v, float):
        if math.isinf(v):
            return 0 if v < 0 else round_to(Fraction(1), fmt)
        return 0  # -0.0 becomes +0.0
    if v <= 0:
        return 0
    if v >= 1:
        return round_to(Fraction(1), fmt)
    return bits


def _sum(x, y, mode: str):
    """x + y of decoded values: the exact value, and the sign of an exact zero."""
    if x is NAN or y is NAN:
        return NAN, 0
    if isinstance(x, float) and math.isinf(x):
        if isinstance(y, float) and math.isinf(y) and x != y:
            return NAN, 0
        return x, 0
    if isinstance(y, float) and math.isinf(y):
        return y, 0
    fx = Fraction(x) if isinstance(x, float) else x
    fy = Fraction(y) if isinstance(y, float) else y
    total = fx + fy
    if total == 0:
        sx, sy = sign_of(x), sign_of(y)
        if x == 0 and y == 0 and sx == sy:
            return total, sx
        # IEEE 754 6.3: an exact zero sum of opposite signs is +0, or -0 rounding down
        return total, 1 if mode == "rm" else 0
    return total, 0


def add(a: int, b: int, fmt: Format, mode: str = "rn", ftz: bool = False,
        sat: bool = False) -> int:
    value, zero_sign = _sum(decode(a, fmt, ftz), decode(b, fmt, ftz), mode)
    return _finish(value, fmt, mode, ftz, sat, zero_sign)


def negate(bits: int, fmt: Format) -> int:
    return bits ^ (1 << (fmt.width - 1))


def absolute(bits: int, fmt: Format) -> int:
    return bits & ~(1 << (fmt.width - 1))


def sub(a: int, b: int, fmt: Format, mode: str = "rn", ftz: bool = False,
        sat: bool = False) -> int:
    value, zero_sign = _sum(decode(a, fmt, ftz), decode(negate(b, fmt), fmt, ftz), mode)
    return _finish(value, fmt, mode, ftz, sat, zero_sign)


def _product(x, y):
    """x * y of decoded values: the exact value and its sign (for zeros and infinities)."""
    if x is NAN or y is NAN:
        return NAN, 0
    sign = sign_of(x) ^ sign_of(y)
    x_inf = isinstance(x, float) and math.isinf(x)
    y_inf = isinstance(y, float) and math.isinf(y)
    if x_inf or y_inf:
        if x == 0 or y == 0:
            return NAN, 0
        return (-math.inf if sign else math.inf), sign
    return Fraction(x) * Fraction(y), sign


def mul(a: int, b: int, fmt: Format, mode: str = "rn", ftz: bool = False,
        sat: bool = False) -> int:
    value, sign = _product(decode(a, fmt, ftz), decode(b, fmt, ftz))
    return _finish(value, fmt, mode, ftz, sat, sign)


def fma(a: int, b: int, c: int, fmt: Format, mode: str = "rn", ftz: bool = False,
        sat: bool = False) -> int:
    """a * b + c with one rounding (IEEE 754 5.4.1 fusedMultiplyAdd)."""
    product, sign = _product(decode(a, fmt, ftz), decode(b, fmt, ftz))
    z = decode(c, fmt, ftz)
    if product is NAN or z is NAN:
        return _finish(NAN, fmt, mode, ftz, sat)
    if isinstance(product, Fraction) and product == 0:
        product = -0.0 if sign else 0.0
    value, zero_sign = _sum(product, z, mode)
    return _finish(value, fmt, mode, ftz, sat, zero_sign)


def div(a: int, b: int, fmt: Format, mode: str = "rn", ftz: bool = False) -> int:
    x, y = decode(a, fmt, ftz), decode(b, fmt, ftz)
    if x is NAN or y is NAN:
        return canonical_nan(fmt)
    sign = sign_of(x) ^ sign_of(y)
    x_inf = isinstance(x, float) and math.isinf(x)
    y_inf = isinstance(y, float) and math.isinf(y)
    if (x_inf and y_inf) or (x == 0 and y == 0):
        return canonical_nan(fmt)
    if x_inf or y == 0:
        return round_to(-math.inf if sign else math.inf, fmt)
    if y_inf or x == 0:
        return round_to(-0.0 if sign else 0.0, fmt)
    return round_to(Fraction(x) / Fraction(y), fmt, mode, ftz=ftz)


def sqrt(a: int, fmt: Format, mode: str = "rn", ftz: bool = False) -> int:
    """Correctly rounded square root (IEEE 754 5.4.1 squareRoot)."""
    x = decode(a, fmt, ftz)
    if x is NAN:
        return canonical_nan(fmt)
    if isinstance(x, float):
        if x == 0:
            return round_to(x, fmt)  # sqrt(-0) = -0
        return round_to(x, fmt) if x > 0 else canonical_nan(fmt)
    if x < 0:
        return canonical_nan(fmt)
    # s = floor(sqrt(x) * 2^k) for a k giving far more bits than the format holds; the true
    # root lies in [s, s+1) / 2^k, and no rounding boundary of the format falls strictly
    # inside that interval, so (s + 1/2) / 2^k rounds like the root (an exact root has s^2
    # equal to x * 4^k and is used as it is).
    k = fmt.mantissa_bits + 8 - _floor_log2(x) // 2 + 140
    scaled = x * _pow2(2 * k)
    whole = scaled.numerator // scaled.denominator
    s = math.isqrt(whole)
    if s * s == scaled:
        root = Fraction(s) / _pow2(k)
    else:
        root = (Fraction(s) + Fraction(1, 2)) / _pow2(k)
    return round_to(root, fmt, mode, ftz=ftz)


def compare(a: int, b: int, fmt: Format, ftz: bool = False) -> str | None:
    """'lt', 'eq' or 'gt', or None when unordered (a NaN)."""
    x, y = decode(a, fmt, ftz), decode(b, fmt, ftz)
    if x is NAN or y is NAN:
        return None
    x, y = Fraction(x) if not isinstance(x, float) or math.isfinite(x) else x, \
        Fraction(y) if not isinstance(y, float) or math.isfinite(y) else y
    if x < y:
        return "lt"
    if x > y:
        return "gt"
    return "eq"


def min_(a: int, b: int, fmt: Format, ftz: bool = False, nan: bool = False) -> int | None:
    """PTX min: a NaN operand is ignored (the other is returned); two NaNs, or any NaN with
    ``.NaN``, give the canonical NaN. None for +0 against -0, whose order the cases leave
    unspecified."""
    return _pick(a, b, fmt, ftz, nan, "lt")


def max_(a: int, b: int, fmt: Format, ftz: bool = False, nan: bool = False) -> int | None:
    return _pick(a, b, fmt, ftz, nan, "gt")


def _pick(a: int, b: int, fmt: Format, ftz: bool, nan: bool, wanted: str) -> int | None:
    if ftz:
        a, b = flush(a, fmt), flush(b, fmt)
    x, y = value_of(a, fmt), value_of(b, fmt)
    if x is NAN and y is NAN:
        return canonical_nan(fmt)
    if x is NAN or y is NAN:
        return canonical_nan(fmt) if nan else (b if x is NAN else a)
    order = compare(a, b, fmt)
    if order == wanted:
        return a
    if order == "eq" and sign_of(x) != sign_of(y):
        return None
    return b
