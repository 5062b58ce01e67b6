"""One rounding of the IEEE float operations in every mode and at every magnitude: subnormal
results, overflow toward a directed mode, products that overflow before ``c`` brings them
back, signed zeros (PTX ISA 9.7.3; IEEE 754 6.3, 7.4).

The expected values are exact fractions rounded here (:func:`reference`), sharing no code with
the emulator; the square roots come from ``math.sqrt`` (correctly rounded) and a step to the
neighbour for the directed modes.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelcheck.emu import fparith
from kernelcheck.emu.exactfloat import exact
from tests.emu.ptx_kernels import run_kernel

MODES = ("rn", "rz", "rm", "rp")
#: precision, smallest normal exponent, largest exponent (IEEE 754 binary64, binary32)
_FORMAT = {"f64": (53, -1022, 1023), "f32": (24, -126, 127)}


def reference(value: Fraction, fmt: str, mode: str, zero_sign: int) -> float:
    """``value`` rounded to ``fmt`` in ``mode``, worked out in fractions; ``zero_sign`` is
    the sign of an exact zero."""
    if value == 0:
        return -0.0 if zero_sign else 0.0
    precision, emin, emax = _FORMAT[fmt]
    negative, magnitude = value < 0, abs(value)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    while Fraction(2) ** exponent > magnitude:
        exponent -= 1
    while Fraction(2) ** (exponent + 1) <= magnitude:
        exponent += 1
    quantum = Fraction(2) ** (max(exponent, emin) - precision + 1)
    units = math.floor(magnitude / quantum)
    rest = magnitude / quantum - units
    away = {"rz": False, "rm": negative, "rp": not negative}.get(mode)
    if rest and (away if away is not None else
                 rest > Fraction(1, 2) or (rest == Fraction(1, 2) and units % 2 == 1)):
        units += 1
    largest = (2**precision - 1) * Fraction(2) ** (emax - precision + 1)
    if units * quantum > largest:
        toward_zero = mode == "rz" or (mode == "rm" and not negative) or (
            mode == "rp" and negative)
        result = float(largest) if toward_zero else math.inf
    else:
        result = float(units * quantum)
    return -result if negative else result


def _exact_value(name: str, xs: tuple[float, ...], mode: str) -> tuple[Fraction, int]:
    """The exact result of ``name`` and the sign of an exact zero (IEEE 754 6.3)."""
    f = [Fraction(x) for x in xs]
    sign = [math.copysign(1.0, x) < 0 for x in xs]
    if name == "mul":
        return f[0] * f[1], sign[0] ^ sign[1]
    if name == "div":
        return f[0] / f[1], sign[0] ^ sign[1]
    if name in ("add", "sub", "fma"):
        if name == "fma":
            x, sx, y, sy = f[0] * f[1], sign[0] ^ sign[1], f[2], sign[2]
        else:
            x, sx = f[0], sign[0]
            y, sy = (f[1], sign[1]) if name == "add" else (-f[1], not sign[1])
        if x == 0 and y == 0 and sx == sy:
            return Fraction(0), int(sx)
        return x + y, int(mode == "rm")
    raise ValueError(name)


def _same(a: float, b: float) -> bool:
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


_F64 = st.floats(allow_nan=False, allow_infinity=False)
_F64_EDGES = st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308,
                              1.7976931348623157e308, -1.7976931348623157e308, 1.0, -1.0,
                              2.0**-537, 2.0**511, 1 / 3])
_VALUE = st.one_of(_F64, _F64_EDGES)
_F32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(["add", "sub", "mul", "fma", "div"]),
       mode=st.sampled_from(MODES),
       rows=st.lists(st.tuples(_VALUE, _VALUE, _VALUE), min_size=1, max_size=6))
def test_f64_operations_round_once(name, mode, rows):
    if name == "div":
        rows = [r for r in rows if r[1] != 0] or [(1.0, 3.0, 0.0)]
    arity = 3 if name == "fma" else 2
    columns = [np.array([r[k] for r in rows]) for k in range(arity)]
    got = fparith.rounded(name, columns, "f64", mode)
    for i, row in enumerate(rows):
        value, zero_sign = _exact_value(name, row[:arity], mode)
        want = reference(value, "f64", mode, zero_sign)
        assert _same(float(got[i]), want), (name, mode, row[:arity], float(got[i]), want)
        assert _same(exact(name, row[:arity], "f64", mode), want)


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(["add", "sub", "mul", "fma", "div"]),
       mode=st.sampled_from(MODES),
       rows=st.lists(st.tuples(_F32, _F32, _F32), min_size=1, max_size=6))
def test_f32_operations_round_once(name, mode, rows):
    if name == "div":
        rows = [r for r in rows if r[1] != 0] or [(1.0, 3.0, 0.0)]
    arity = 3 if name == "fma" else 2
    columns = [np.array([r[k] for r in rows]) for k in range(arity)]
    got = fparith.rounded(name, columns, "f32", mode)
    for i, row in enumerate(rows):
        value, zero_sign = _exact_value(name, row[:arity], mode)
        want = reference(value, "f32", mode, zero_sign)
        assert _same(float(got[i]), want), (name, mode, row[:arity], float(got[i]), want)


@settings(max_examples=100, deadline=None)
@given(x=st.floats(min_value=0.0, allow_infinity=False, allow_nan=False),
       mode=st.sampled_from(MODES))
def test_f64_sqrt_rounds_once(x, mode):
    got = float(fparith.rounded("sqrt", [np.array([x])], "f64", mode)[0])
    root = math.sqrt(x)  # correctly rounded to nearest
    exact_square = Fraction(root) ** 2
    if mode != "rn" and exact_square != Fraction(x):
        above = exact_square > Fraction(x)
        if above and mode in ("rz", "rm"):
            root = math.nextafter(root, 0.0)
        elif not above and mode == "rp":
            root = math.nextafter(root, math.inf)
    assert _same(got, root)


def _f64_bits(body: str) -> int:
    raw = run_kernel(body + " st.global.f64 [%rd9], %fd3;", 1, out_words=2)[0]
    return int(raw[0]) | int(raw[1]) << 32


@pytest.mark.parametrize("op,a,b,c,expected", [
    # 2^600 * 2^500 - max is still past the range: +inf; 2^512 * 2^512 overflows alone, but
    # fused with -max it is 2^971, finite
    ("fma.rn", 0x6570000000000000, 0x5F30000000000000, 0xFFEFFFFFFFFFFFFF, 0x7FF0000000000000),
    ("fma.rn", 0x5FF0000000000000, 0x5FF0000000000000, 0xFFEFFFFFFFFFFFFF, None),
    # -0 * 1 + -0 is -0 in every mode; -1 * 1 + 1 is +0, -0 under .rm
    ("fma.rn", 0x8000000000000000, 0x3FF0000000000000, 0x8000000000000000,
     0x8000000000000000),
    ("fma.rz", 0xBFF0000000000000, 0x3FF0000000000000, 0x3FF0000000000000, 0),
    ("fma.rm", 0xBFF0000000000000, 0x3FF0000000000000, 0x3FF0000000000000,
     0x8000000000000000),
    # max * 2 toward zero stays at max; up goes to infinity
    ("fma.rz", 0x7FEFFFFFFFFFFFFF, 0x4000000000000000, 0, 0x7FEFFFFFFFFFFFFF),
    ("fma.rp", 0x7FEFFFFFFFFFFFFF, 0x4000000000000000, 0, 0x7FF0000000000000),
    # 2^-1074 * 0.5 is below the smallest subnormal: .rp rounds it up, .rz to +0
    ("fma.rp", 0x0000000000000001, 0x3FE0000000000000, 0, 0x0000000000000001),
    ("fma.rz", 0x0000000000000001, 0x3FE0000000000000, 0, 0),
])
def test_fma_f64_edges_through_the_emulator(op, a, b, c, expected):
    got = _f64_bits(f"mov.b64 %fd0, {a:#x}; mov.b64 %fd1, {b:#x}; mov.b64 %fd2, {c:#x};"
                    f" {op}.f64 %fd3, %fd0, %fd1, %fd2;")
    if expected is None:
        values = tuple(float(np.uint64(v).view(np.float64)) for v in (a, b, c))
        value, zero_sign = _exact_value("fma", values, op.split(".")[1])
        want = reference(value, "f64", op.split(".")[1], zero_sign)
        assert math.isfinite(want)
        expected = int(np.float64(want).view(np.uint64))
    assert got == expected


@pytest.mark.parametrize("mode,expected", [("rn", 0), ("rz", 0), ("rp", 0),
                                           ("rm", 0x80000000)])
def test_exact_zero_sum_is_minus_zero_only_rounding_down(mode, expected):
    # 1.5 - 1.5 and 1.5 * -1 + 1.5 are exact zeros of opposite-signed terms
    body = (f"mov.b32 %f1, 0f3FC00000; sub.{mode}.f32 %f3, %f1, %f1;"
            f" fma.{mode}.f32 %f4, %f1, 0fBF800000, %f1; mov.b32 %r9, %f3; mov.b32 %r10, %f4;"
            " st.global.u32 [%rd9], %r9; st.global.u32 [%rd9+4], %r10;")
    out = run_kernel(body, 1, out_words=2)[0]
    assert int(out[0]) == expected and int(out[1]) == expected
