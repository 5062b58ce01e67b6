"""References of the floating-point cases (PTX ISA 9.7.3 "Floating-Point Instructions"),
computed exactly and rounded by :mod:`.ieee`; NaN results compare as any NaN except where
the ISA fixes the bits (abs, neg and copysign change only the sign bit)."""

from __future__ import annotations

import numpy as np

from tests.conformance.reference import fpops
from tests.conformance.reference.bits import array, pyints
from tests.conformance.reference.ieee import BF16, F16, F32, F64, NAN, round_to, value_of
from tests.conformance.reference.registry import Expected, Inputs, reference


def f32s(values) -> Expected:
    return Expected(array(values, "<u4").view("<f4"), nan="any")


def f64s(values) -> Expected:
    return Expected(array(values, "<u8").view("<f8"), nan="any")


def _pairs(inputs: Inputs) -> list[tuple[int, int]]:
    xs, ys = (pyints(v) for v in inputs.cross("a", "b"))
    return list(zip(xs, ys, strict=True))


def widen(bits: int) -> int:
    """An f32 pattern converted to f64 (exact, PTX ISA 9.7.9.21 cvt.f64.f32)."""
    return round_to(value_of(bits, F32), F64)


@reference("float/f32_arith")
def f32_arith(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    return {
        "o_mul_rz": f32s([fpops.mul(x, y, F32, "rz") for x, y in pairs]),
        "o_mul_rm": f32s([fpops.mul(x, y, F32, "rm") for x, y in pairs]),
        "o_mul_rp": f32s([fpops.mul(x, y, F32, "rp") for x, y in pairs]),
        "o_add": f32s([fpops.add(x, y, F32) for x, y in pairs]),
        "o_sub": f32s([fpops.sub(x, y, F32) for x, y in pairs]),
        "o_mul": f32s([fpops.mul(x, y, F32) for x, y in pairs]),
        "o_add_plain": f32s([fpops.add(x, y, F32) for x, y in pairs]),
        "o_mul_plain": f32s([fpops.mul(x, y, F32) for x, y in pairs]),
        "o_mad": f32s([fpops.fma(x, y, x, F32) for x, y in pairs]),
    }


@reference("float/f32_modes")
def f32_modes(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    out = {}
    for mode in ("rz", "rm", "rp"):
        out[f"o_add_{mode}"] = f32s([fpops.add(x, y, F32, mode) for x, y in pairs])
        out[f"o_sub_{mode}"] = f32s([fpops.sub(x, y, F32, mode) for x, y in pairs])
        out[f"o_fma_{mode}"] = f32s([fpops.fma(x, y, x, F32, mode) for x, y in pairs])
    return out


@reference("float/fma_f32")
def fma_f32(inputs: Inputs) -> dict:
    xs, ys, zs = (pyints(v) for v in inputs.cross("a", "b", "c"))
    triples = list(zip(xs, ys, zs, strict=True))
    return {"o_fma_rn": f32s([fpops.fma(x, y, z, F32, "rn") for x, y, z in triples])}


@reference("float/f64")
def f64(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    return {"o_add_rn": f64s([fpops.add(x, y, F64) for x, y in pairs]),
            "o_mul_rn": f64s([fpops.mul(x, y, F64) for x, y in pairs]),
            "o_sub_rn": f64s([fpops.sub(x, y, F64) for x, y in pairs])}


@reference("float/fma_f64")
def fma_f64(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    return {"o_fma_rn": f64s([fpops.fma(x, y, y, F64) for x, y in pairs])}


@reference("float/f64_modes")
def f64_modes(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    out = {}
    for mode in ("rz", "rm", "rp"):
        out[f"o_add_{mode}"] = f64s([fpops.add(x, y, F64, mode) for x, y in pairs])
        out[f"o_mul_{mode}"] = f64s([fpops.mul(x, y, F64, mode) for x, y in pairs])
        out[f"o_fma_{mode}"] = f64s([fpops.fma(x, y, y, F64, mode) for x, y in pairs])
    return out


def _saturated(results: list[tuple[int, int]]) -> Expected:
    """.sat results; a result whose unclamped value is -0.0 may stay -0.0 or become +0.0
    (-0.0 lies in [0.0, 1.0]: the ISA's "clamps the result to [0.0, 1.0]" does not say)."""
    values = [sat for sat, _ in results]
    unspecified = np.array([raw == 0x80000000 for _, raw in results])
    return Expected(array(values, "<u4").view("<f4"), nan="any", unspecified=unspecified)


@reference("float/ftz_sat")
def ftz_sat(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)

    def both(op, *args, **kw):
        return op(*args, F32, sat=True, **kw), op(*args, F32, **kw)

    return {
        "o_add_ftz": f32s([fpops.add(x, y, F32, ftz=True) for x, y in pairs]),
        "o_mul_ftz": f32s([fpops.mul(x, y, F32, ftz=True) for x, y in pairs]),
        "o_fma_ftz": f32s([fpops.fma(x, y, y, F32, ftz=True) for x, y in pairs]),
        "o_add_sat": _saturated([both(fpops.add, x, y) for x, y in pairs]),
        "o_mul_sat": _saturated([both(fpops.mul, x, y) for x, y in pairs]),
        "o_fma_sat": _saturated([both(fpops.fma, x, y, x) for x, y in pairs]),
        "o_sub_ftz_sat": _saturated([both(fpops.sub, x, y, ftz=True) for x, y in pairs]),
    }


def _picked(values: list[int | None], dtype: str) -> Expected:
    unspecified = np.array([v is None for v in values])
    filled = array([0 if v is None else v for v in values], dtype)
    view = "<f4" if dtype == "<u4" else "<f8"
    return Expected(filled.view(view), nan="any", unspecified=unspecified)


@reference("float/minmax")
def minmax(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    wide = [(widen(x), widen(y)) for x, y in pairs]
    return {
        "o_min": _picked([fpops.min_(x, y, F32) for x, y in pairs], "<u4"),
        "o_max": _picked([fpops.max_(x, y, F32) for x, y in pairs], "<u4"),
        "o_min_ftz": _picked([fpops.min_(x, y, F32, ftz=True) for x, y in pairs], "<u4"),
        "o_max_nan": _picked([fpops.max_(x, y, F32, nan=True) for x, y in pairs], "<u4"),
        "o_min_nan_ftz": _picked([fpops.min_(x, y, F32, ftz=True, nan=True)
                                  for x, y in pairs], "<u4"),
        "o_min64": _picked([fpops.min_(x, y, F64) for x, y in wide], "<u8"),
        "o_max64": _picked([fpops.max_(x, y, F64) for x, y in wide], "<u8"),
    }


@reference("float/signs")
def signs(inputs: Inputs) -> dict:
    # abs, neg and copysign act on the sign bit (PTX ISA 9.7.3.8 abs, 9.7.3.9 neg, 9.7.3.24
    # copysign); the f32 results are compared bit for bit, NaNs included. The f64 operands
    # come from cvt.f64.f32, which keeps a NaN a NaN but whose sign and payload the ISA does
    # not pin: NaN results compare as NaNs, and copysign from a NaN sign is not compared.
    pairs = _pairs(inputs)

    def exact(values):
        return array(values, "<u4").view("<f4")

    sign32 = 1 << 31
    return {
        "o_abs": exact([x & ~sign32 for x, _ in pairs]),
        "o_neg": exact([x ^ sign32 for x, _ in pairs]),
        "o_abs_ftz": exact([fpops.flush(x, F32) & ~sign32 for x, _ in pairs]),
        "o_neg_ftz": exact([fpops.flush(x, F32) ^ sign32 for x, _ in pairs]),
        "o_copysign": exact([(y & ~sign32) | (x & sign32) for x, y in pairs]),
        "o_abs64": f64s([widen(x) & ~(1 << 63) for x, _ in pairs]),
        "o_neg64": f64s([widen(x) ^ (1 << 63) for x, _ in pairs]),
        "o_copysign64": Expected(
            array([(widen(y) & ~(1 << 63)) | (widen(x) & (1 << 63)) for x, y in pairs],
                  "<u8").view("<f8"), nan="any",
            unspecified=np.array([value_of(x, F32) is NAN for x, _ in pairs])),
    }


@reference("float/div_sqrt")
def div_sqrt(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    one = 0x3F800000
    out = {}
    for mode in ("rn", "rz", "rm", "rp"):
        out[f"o_div_{mode}"] = f32s([fpops.div(x, y, F32, mode) for x, y in pairs])
    for mode in ("rn", "rz", "rm"):
        out[f"o_sqrt_{mode}"] = f32s([fpops.sqrt(x, F32, mode) for x, _ in pairs])
    out["o_rcp_rn"] = f32s([fpops.div(one, y, F32) for _, y in pairs])
    out["o_div_ftz"] = f32s([fpops.div(x, y, F32, ftz=True) for x, y in pairs])
    out["o_sqrt_ftz"] = f32s([fpops.sqrt(x, F32, ftz=True) for x, _ in pairs])
    wide = [(widen(x), widen(y)) for x, y in pairs]
    one64 = 0x3FF0000000000000
    out["o_div64"] = f64s([fpops.div(x, y, F64) for x, y in wide])
    out["o_sqrt64"] = f64s([fpops.sqrt(x, F64) for x, _ in wide])
    out["o_rcp64"] = f64s([fpops.div(one64, y, F64) for _, y in wide])
    return out


@reference("float/div_sqrt_modes")
def div_sqrt_modes(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    one, one64 = 0x3F800000, 0x3FF0000000000000
    wide = [(widen(x), widen(y)) for x, y in pairs]
    return {
        "o_rcp_rz": f32s([fpops.div(one, y, F32, "rz") for _, y in pairs]),
        "o_rcp_rm": f32s([fpops.div(one, y, F32, "rm") for _, y in pairs]),
        "o_rcp_rp": f32s([fpops.div(one, y, F32, "rp") for _, y in pairs]),
        "o_sqrt_rp": f32s([fpops.sqrt(x, F32, "rp") for x, _ in pairs]),
        "o_div64_rz": f64s([fpops.div(x, y, F64, "rz") for x, y in wide]),
        "o_rcp64_rm": f64s([fpops.div(one64, y, F64, "rm") for _, y in wide]),
        "o_sqrt64_rp": f64s([fpops.sqrt(x, F64, "rp") for x, _ in wide]),
    }


@reference("float/testp")
def testp(inputs: Inputs) -> dict:
    # PTX ISA 9.7.3.23: finite, infinite, number (not NaN), notanumber, normal (finite,
    # non-zero, not subnormal), subnormal
    (xs,) = (pyints(v) for v in inputs.cross("a"))
    out = []
    for x in xs:
        bits = []
        for fmt, pattern in ((F32, x), (F64, widen(x))):
            v = value_of(pattern, fmt)
            exponent = (pattern >> fmt.mantissa_bits) & ((1 << fmt.exponent_bits) - 1)
            is_nan = v is NAN
            is_inf = isinstance(v, float) and v != 0
            is_zero = isinstance(v, float) and v == 0
            subnormal = exponent == 0 and not is_zero
            bits.append([not is_nan and not is_inf, is_inf, not is_nan, is_nan,
                         not (is_nan or is_inf or is_zero or subnormal), subnormal])
        word = sum(1 << k for k, b in enumerate(bits[0]) if b)
        word |= sum(1 << (8 + k) for k, b in enumerate(bits[1]) if b)
        out.append(word)
    return {"o_bits": array(out, "<u4")}



def relu(bits: int, fmt) -> int | None:
    """.relu: a negative result becomes +0 and a NaN the canonical NaN (PTX ISA 9.7.4.4).
    None for a -0.0 result: "clamps the result to 0 if negative" leaves its sign open."""
    v = value_of(bits, fmt)
    if v is NAN:
        return 0x7FFF
    if bits == 0x8000:
        return None
    return 0 if fpops.sign_of(v) else bits


def sat16(bits: int, fmt) -> int | None:
    """.sat on a half result; None for -0.0 (see _saturated)."""
    return None if bits == 0x8000 else fpops.saturate(bits, fmt)


def halves(values: list[int | None]) -> Expected:
    """16-bit results (one per lane) where a NaN may be any NaN; None: not compared."""
    unspecified = np.array([v is None for v in values])
    return Expected(array([0 if v is None else v for v in values], "<u2"), nan="any",
                    unspecified=unspecified)


def _lanes(results: list[tuple[int, int]]) -> list[int]:
    """Packed results as their lanes in memory order: low half first."""
    return [lane for pair in results for lane in pair]


@reference("float/half")
def half(inputs: Inputs) -> dict:
    # x = {hi: b, lo: a}, y = {hi: a, lo: b}: lane 0 computes (a, b), lane 1 (b, a)
    pairs = _pairs(inputs)
    sign = 0x8000
    return {
        "o_add": halves([fpops.add(a, b, F16) for a, b in pairs]),
        "o_sub": halves([fpops.sub(a, b, F16) for a, b in pairs]),
        "o_mul": halves([fpops.mul(a, b, F16) for a, b in pairs]),
        "o_fma": halves([fpops.fma(a, b, a, F16) for a, b in pairs]),
        "o_add_sat": halves([sat16(fpops.add(a, b, F16), F16) for a, b in pairs]),
        "o_add_x2": halves(_lanes([(fpops.add(a, b, F16), fpops.add(b, a, F16))
                                   for a, b in pairs])),
        "o_mul_x2": halves(_lanes([(fpops.mul(a, b, F16), fpops.mul(b, a, F16))
                                   for a, b in pairs])),
        "o_fma_x2": halves(_lanes([(fpops.fma(a, b, a, F16), fpops.fma(b, a, b, F16))
                                   for a, b in pairs])),
        # neg and abs change the sign bit only, NaN included
        "o_neg_x2": Expected(array(_lanes([(a ^ sign, b ^ sign) for a, b in pairs]), "<u2")),
        "o_abs": Expected(array([a & ~sign for a, _ in pairs], "<u2")),
        "o_neg": Expected(array([a ^ sign for a, _ in pairs], "<u2")),
    }


@reference("float/bf16")
def bf16(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    sign = 0x8000
    return {
        "o_fma": halves([fpops.fma(a, b, a, BF16) for a, b in pairs]),
        "o_add": halves([fpops.add(a, b, BF16) for a, b in pairs]),
        "o_mul": halves([fpops.mul(a, b, BF16) for a, b in pairs]),
        "o_sub": halves([fpops.sub(a, b, BF16) for a, b in pairs]),
        "o_fma_x2": halves(_lanes([(fpops.fma(a, b, a, BF16), fpops.fma(b, a, b, BF16))
                                   for a, b in pairs])),
        "o_add_x2": halves(_lanes([(fpops.add(a, b, BF16), fpops.add(b, a, BF16))
                                   for a, b in pairs])),
        "o_neg": Expected(array([a ^ sign for a, _ in pairs], "<u2")),
        "o_abs_x2": Expected(array(_lanes([(a & ~sign, b & ~sign) for a, b in pairs]),
                                   "<u2")),
    }


@reference("float/half_minmax")
def half_minmax(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)

    def lanes(op, fmt, **kw):
        return _lanes([(op(a, b, fmt, **kw), op(b, a, fmt, **kw)) for a, b in pairs])

    return {
        "o_min": halves([fpops.min_(a, b, F16) for a, b in pairs]),
        "o_max": halves([fpops.max_(a, b, F16) for a, b in pairs]),
        "o_min_nan": halves([fpops.min_(a, b, F16, nan=True) for a, b in pairs]),
        "o_max_x2": halves(lanes(fpops.max_, F16)),
        "o_min_bf": halves([fpops.min_(a, b, BF16) for a, b in pairs]),
        "o_max_bf_x2": halves(lanes(fpops.max_, BF16)),
        "o_min_nan_x2": halves(lanes(fpops.min_, F16, nan=True)),
    }


@reference("float/half_ftz")
def half_ftz(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    return {
        "o_mul": halves([fpops.mul(a, b, F16, ftz=True) for a, b in pairs]),
        "o_add": halves([fpops.add(a, b, F16, ftz=True) for a, b in pairs]),
        "o_fma_x2": halves(_lanes([(fpops.fma(a, b, a, F16, ftz=True),
                                    fpops.fma(b, a, b, F16, ftz=True)) for a, b in pairs])),
    }


@reference("float/relu")
def relu_case(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    return {
        "o_f16": halves([relu(fpops.fma(a, b, b, F16), F16) for a, b in pairs]),
        "o_bf16": halves([relu(fpops.fma(a, b, b, BF16), BF16) for a, b in pairs]),
        "o_f16x2": halves(_lanes([(relu(fpops.fma(a, b, b, F16), F16),
                                   relu(fpops.fma(b, a, a, F16), F16)) for a, b in pairs])),
    }
