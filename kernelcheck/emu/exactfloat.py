"""Exact IEEE arithmetic of single values in Python integers, rounded once.

:mod:`kernelcheck.emu.fparith` computes the float instructions over numpy arrays with
error-free transformations of float64 values (TwoSum, Dekker's product, rounding to odd). Those
are exact only while no intermediate overflows or underflows. For the elements where one might
(operands or results near the ends of the float64 range, subnormal results, exact zeros, a
product that overflows before ``c`` brings it back), this module computes the same operation
from the exact operands as integers and rounds it once, per IEEE 754-2008:

* every finite float is ``(-1)**s * m * 2**e`` with integers ``m`` and ``e``, so a sum or a
  product is exact in Python integers, a quotient is an exact fraction, and a square root is
  bracketed between two integers with as many bits as needed;
* rounding (PTX ISA 9.7.3 "Floating Point Instructions", rounding modifiers): ``.rn`` to
  nearest, ties to even; ``.rz`` toward zero; ``.rm`` toward -inf; ``.rp`` toward +inf;
  subnormal results are rounded at the subnormal spacing (gradual underflow); a result past
  the largest finite value is infinity, except that rounding toward zero (and ``.rm`` of a
  positive, ``.rp`` of a negative value) stops at the largest finite value (IEEE 754 7.4);
* an exact zero sum of operands of opposite signs is +0, or -0 under ``.rm``; ``x + x`` keeps
  the sign of ``x`` (IEEE 754 6.3); a nonzero value that rounds to zero keeps its sign.

Only finite operands come here: the callers handle infinities and NaN, which need no rounding.
"""

from __future__ import annotations

import math

__all__ = ["FORMATS", "exact", "round_value"]

#: precision (significand bits, hidden bit included), exponent of the smallest normal value
#: and of the largest binade, of each element format.
FORMATS = {"f64": (53, -1022, 1023), "f32": (24, -126, 127), "f16": (11, -14, 15),
           "bf16": (8, -126, 127)}


def _split(x: float) -> tuple[int, int, int]:
    """``(sign, m, e)`` with ``x = (-1)**sign * m * 2**e`` exactly (``x`` finite)."""
    sign = 1 if math.copysign(1.0, x) < 0 else 0
    if x == 0:
        return sign, 0, 0
    frac, exp = math.frexp(abs(x))
    return sign, int(frac * (1 << 53)), exp - 53


def _floor_log2(num: int, den: int) -> int:
    """``floor(log2(num / den))`` of positive integers."""
    k = num.bit_length() - den.bit_length()
    if (num << max(0, -k)) < (den << max(0, k)):
        k -= 1
    return k


def round_value(sign: int, num: int, den: int, exp: int, fmt: str, mode: str,
                zero_sign: int = 0) -> float:
    """The float64 value of ``(-1)**sign * num / den * 2**exp`` rounded to ``fmt`` in
    ``mode``; ``zero_sign`` is the sign of an exact zero (``num == 0``).

    ``num`` may be given as ``2 * r + 1`` over ``den = 2`` for a value known to lie strictly
    between the integers ``r`` and ``r + 1`` when ``r`` has at least ``precision + 2`` bits
    (a square root): every rounding boundary is then an integer, so the stand-in rounds as
    the true value does.
    """
    precision, emin, emax = FORMATS[fmt]
    if num == 0:
        return -0.0 if zero_sign else 0.0
    k = _floor_log2(num, den) + exp
    q = max(k, emin) - (precision - 1)  # exponent of the last significand bit
    shift = exp - q
    if shift >= 0:
        num <<= shift
    else:
        den <<= -shift
    units, rem = divmod(num, den)
    if rem:
        if mode == "rn":
            twice = 2 * rem
            up = twice > den or (twice == den and units & 1)
        elif mode == "rz":
            up = False
        elif mode == "rm":
            up = bool(sign)
        elif mode == "rp":
            up = not sign
        else:
            raise ValueError(f"rounding mode {mode!r}")
        units += up
    # Past the largest finite value (2**precision - 1) * 2**top: a larger exponent, or the
    # top one with a significand rounded up to 2**precision.
    top = emax - precision + 1
    if q > top or (q == top and units >= 1 << precision):
        toward_zero = mode == "rz" or (mode == "rm" and not sign) or (mode == "rp" and sign)
        magnitude = math.ldexp(float((1 << precision) - 1), top) if toward_zero else math.inf
        return -magnitude if sign else magnitude
    value = math.ldexp(float(units), q) if units else 0.0
    return -value if sign else value


def _sum(terms: list[tuple[int, int, int]], mode: str) -> tuple[int, int, int, int]:
    """Exact sum of signed terms ``(sign, m, e)``: ``(sign, magnitude, exp, zero_sign)``."""
    low = min(e for _, m, e in terms if m) if any(m for _, m, _ in terms) else 0
    total = sum((-m if s else m) << (e - low) for s, m, e in terms if m)
    if total:
        return (1 if total < 0 else 0), abs(total), low, 0
    # IEEE 754 6.3: an exact zero sum is +0 (-0 under .rm) unless every term is a zero of
    # one sign, which the sum keeps (x + x = x for x = -0).
    zeros = [s for s, m, _ in terms if m == 0]
    if len(zeros) == len(terms) and len(set(zeros)) == 1:
        return 0, 0, 0, zeros[0]
    return 0, 0, 0, int(mode == "rm")


def exact(name: str, operands: tuple[float, ...], fmt: str, mode: str) -> float:
    """``name`` (add, sub, mul, fma, div, rcp, sqrt) of finite float64 ``operands`` (values
    of ``fmt``), rounded once to ``fmt`` in ``mode``, as a float64 value.

    A quotient by zero and the square root of a negative value are not finite operations:
    they give infinity or NaN as IEEE 754 defines them (the callers normally keep those).

    Examples
    --------
    >>> exact("fma", (0.1, 10.0, -1.0), "f64", "rn")   # one rounding: not 0.0
    5.551115123125783e-17
    >>> exact("add", (1.0, -1.0), "f64", "rm")
    -0.0
    >>> exact("mul", (1e300, 1e300), "f64", "rz")
    1.7976931348623157e+308
    """
    parts = [_split(x) for x in operands]
    if name in ("add", "sub"):
        a, b = parts
        if name == "sub":
            b = (1 - b[0], b[1], b[2])
        sign, mag, exp, zero = _sum([a, b], mode)
        return round_value(sign, mag, 1, exp, fmt, mode, zero)
    if name == "mul":
        (sa, ma, ea), (sb, mb, eb) = parts
        return round_value(sa ^ sb, ma * mb, 1, ea + eb, fmt, mode, sa ^ sb)
    if name == "fma":
        (sa, ma, ea), (sb, mb, eb), c = parts
        sign, mag, exp, zero = _sum([(sa ^ sb, ma * mb, ea + eb), c], mode)
        return round_value(sign, mag, 1, exp, fmt, mode, zero)
    if name in ("div", "rcp"):
        (sa, ma, ea), (sb, mb, eb) = parts if name == "div" else [(0, 1, 0), parts[0]]
        if mb == 0:
            return math.nan if ma == 0 else math.copysign(math.inf, -1.0 if sa ^ sb else 1.0)
        return round_value(sa ^ sb, ma, mb, ea - eb, fmt, mode, sa ^ sb)
    if name == "sqrt":
        (sa, ma, ea), = parts
        if ma == 0:
            return -0.0 if sa else 0.0  # sqrt(-0) = -0 (IEEE 754 5.4.1)
        if sa:
            return math.nan
        if ea & 1:
            ma, ea = ma << 1, ea - 1
        extra = 2 * (FORMATS[fmt][0] + 4)  # root bits beyond the precision
        ma, ea = ma << extra, ea - extra
        root = math.isqrt(ma)
        if root * root == ma:
            return round_value(0, root, 1, ea // 2, fmt, mode)
        return round_value(0, 2 * root + 1, 2, ea // 2, fmt, mode)
    raise ValueError(f"operation {name!r}")
