"""References of the approximate instructions, checked within the precision the PTX ISA
states for each (PTX ISA 9.7.3, the "Notes" of each instruction):

=====================  =================================================================
rcp.approx.f32         at most 1 ulp from the exact reciprocal
sqrt.approx.f32        relative error at most 2^-23
rsqrt.approx.f32       relative error at most 2^-22.9
div.approx.f32         at most 2 ulp for |b| in [2^-126, 2^126]
div.full.f32           at most 2 ulp over the whole range
sin/cos.approx.f32     absolute error at most 2^-20.9 for arguments in -pi..pi
lg2.approx.f32         absolute error at most 2^-22.6 (for the mantissa)
ex2.approx.f32         relative error at most 2^-22.5
tanh.approx.f32        relative error at most 2^-10.987
=====================  =================================================================

Expected values are the exact function rounded to f32 (the double-precision library
functions are far more accurate than these bounds); special operands (zeros, infinities,
NaN, negative arguments of sqrt and lg2) have exact results, as IEEE 754 gives them.
"""

from __future__ import annotations

import math

import numpy as np

from tests.conformance.reference.bits import pyints
from tests.conformance.reference.registry import Expected, Inputs, reference


def _f32(bits: list[int]) -> list[float]:
    return np.array(bits, dtype="<u4").view("<f4").astype(float).tolist()


def _expected(values: list[float], **tolerance) -> Expected:
    with np.errstate(over="ignore"):
        array = np.array(values, dtype="<f8").astype("<f4")
    return Expected(array, nan="any", **tolerance)


def _call(function, x: float) -> float:
    try:
        return function(x)
    except (ValueError, OverflowError, ZeroDivisionError):
        return math.nan


def _rcp(x: float) -> float:
    if x == 0:
        return math.copysign(math.inf, x)
    return 1.0 / x


def _sqrt(x: float) -> float:
    if x == 0:
        return x
    return math.sqrt(x) if x > 0 else math.nan


def _rsqrt(x: float) -> float:
    if x == 0:
        return math.copysign(math.inf, x)
    if math.isinf(x):
        return 0.0 if x > 0 else math.nan
    return 1.0 / math.sqrt(x) if x > 0 else math.nan


def _flush(x: float) -> float:
    return math.copysign(0.0, x) if x != 0 and abs(x) < 2.0 ** -126 else x


@reference("float/approx_roots")
def approx_roots(inputs: Inputs) -> dict:
    (xs,) = inputs.cross("a")
    values = _f32(pyints(xs))
    return {
        "o_rcp": _expected([_call(_rcp, x) for x in values], ulp=1),
        "o_sqrt": _expected([_call(_sqrt, x) for x in values], rel=2.0 ** -23),
        "o_rsqrt": _expected([_call(_rsqrt, x) for x in values], rel=2.0 ** -22.9),
        "o_rcp_ftz": _expected([_flush(_call(_rcp, _flush(x))) for x in values], ulp=1),
        "o_sqrt_ftz": _expected([_flush(_call(_sqrt, _flush(x))) for x in values],
                                rel=2.0 ** -23),
    }


@reference("float/approx_div")
def approx_div(inputs: Inputs) -> dict:
    a, b = (_f32(pyints(v)) for v in inputs.cross("a", "b"))
    exact = [x / y for x, y in zip(a, b, strict=True)]
    return {"o_div_approx": _expected(exact, ulp=2), "o_div_full": _expected(exact, ulp=2),
            "o_div_full_ftz": _expected([_flush(v) for v in exact], ulp=2)}


@reference("float/approx_trig")
def approx_trig(inputs: Inputs) -> dict:
    (xs,) = inputs.cross("a")
    values = _f32(pyints(xs))
    bound = 2.0 ** -20.9
    return {"o_sin": _expected([math.sin(x) for x in values], abs=bound),
            "o_cos": _expected([math.cos(x) for x in values], abs=bound),
            "o_sin_ftz": _expected([math.sin(_flush(x)) for x in values], abs=bound)}


def _lg2(x: float) -> float:
    if x == 0:
        return -math.inf
    if x < 0 or math.isnan(x):
        return math.nan
    return math.inf if math.isinf(x) else math.log2(x)


def _ex2(x: float) -> float:
    if math.isinf(x):
        return 0.0 if x < 0 else math.inf
    return 2.0 ** x


@reference("float/approx_exp")
def approx_exp(inputs: Inputs) -> dict:
    a, b, c = (_f32(pyints(v)) for v in inputs.cross("a", "b", "c"))
    return {"o_lg2": _expected([_lg2(x) for x in a], abs=2.0 ** -22.6),
            "o_ex2": _expected([_ex2(x) for x in b], rel=2.0 ** -22.5),
            "o_tanh": _expected([math.tanh(x) for x in c], rel=2.0 ** -10.987)}
