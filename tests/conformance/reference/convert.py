"""References of the conversion cases (PTX ISA 9.7.9.21 cvt, 9.7.9.22 cvt.pack), rounded
exactly by :mod:`.ieee`.

Rules used, from the ISA's cvt section: integer-to-integer conversions sign- or zero-extend
the source type's bits and truncate to a narrower destination unless ``.sat`` clamps;
float-to-integer conversions round by ``.rni/.rzi/.rmi/.rpi``, saturate to the destination
range, and turn NaN into 0; ``.f16x2``/``.bf16x2``/FP8 pairs put operand a in the upper half.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from tests.conformance.reference import fpops
from tests.conformance.reference.bits import array, pyints, saturate, signed, unsigned
from tests.conformance.reference.ieee import (
    BF16,
    E4M3,
    E5M2,
    F16,
    F32,
    F64,
    NAN,
    TF32,
    round_to,
    value_of,
)
from tests.conformance.reference.registry import Expected, Inputs, reference


def _dtype(name: str) -> str:
    return {"s8": "<i1", "u8": "<u1", "s16": "<i2", "u16": "<u2", "s32": "<i4", "u32": "<u4",
            "s64": "<i8", "u64": "<u8"}[name]


@reference("convert/int_int")
def int_int(inputs: Inputs) -> dict:
    (xs,) = (pyints(v) for v in inputs.cross("a"))
    out = {
        "o_s32_s8": [signed(x, 8) for x in xs],
        "o_u32_u8": [unsigned(x, 8) for x in xs],
        "o_s32_s16": [signed(x, 16) for x in xs],
        "o_u32_u16": [unsigned(x, 16) for x in xs],
        "o_s64_s32": list(xs),
        "o_u64_u32": [unsigned(x, 32) for x in xs],
        "o_s16_s32": [signed(x, 16) for x in xs],
        "o_u8_u32": [unsigned(x, 8) for x in xs],
        "o_sat_s8": [saturate(x, 8) for x in xs],
        "o_sat_u8": [saturate(x, 8, False) for x in xs],
        "o_sat_s16": [saturate(x, 16) for x in xs],
        "o_sat_u16": [saturate(x, 16, False) for x in xs],
        "o_sat_u32_s32": [saturate(x, 32, False) for x in xs],
        "o_sat_s32_u32": [saturate(unsigned(x, 32), 32) for x in xs],
        "o_sat_u32_s64": [saturate(x << 8, 32, False) for x in xs],
        "o_sat_s32_s64": [saturate(x << 8, 32) for x in xs],
        "o_s8_s64": [signed(x << 8, 8) for x in xs],
    }
    types = {"o_s32_s8": "s32", "o_u32_u8": "u32", "o_s32_s16": "s32", "o_u32_u16": "u32",
             "o_s64_s32": "s64", "o_u64_u32": "u64", "o_s16_s32": "s16", "o_u8_u32": "u8",
             "o_sat_s8": "s8", "o_sat_u8": "u8", "o_sat_s16": "s16", "o_sat_u16": "u16",
             "o_sat_u32_s32": "u32", "o_sat_s32_u32": "s32", "o_sat_u32_s64": "u32",
             "o_sat_s32_s64": "s32", "o_s8_s64": "s8"}
    return {k: array(v, _dtype(types[k])) for k, v in out.items()}


def to_integer(value, mode: str, bits: int, is_signed: bool) -> int:
    """Float (an exact value from .ieee) to integer: round, then saturate; NaN gives 0."""
    if value is NAN:
        return 0
    low = -(1 << (bits - 1)) if is_signed else 0
    high = (1 << (bits - 1)) - 1 if is_signed else (1 << bits) - 1
    if isinstance(value, float):
        if math.isinf(value):
            return high if value > 0 else low
        return 0
    if mode == "rzi":
        whole = math.trunc(value)
    elif mode == "rmi":
        whole = math.floor(value)
    elif mode == "rpi":
        whole = math.ceil(value)
    else:  # rni: nearest, ties to even (Python's round on a Fraction)
        whole = round(value)
    return max(low, min(high, whole))


@reference("convert/float_int")
def float_int(inputs: Inputs) -> dict:
    (xs,) = (pyints(v) for v in inputs.cross("a"))
    values = [value_of(x, F32) for x in xs]
    out = {}
    for mode in ("rni", "rzi", "rmi", "rpi"):
        out[f"o_s32_{mode}"] = array([to_integer(v, mode, 32, True) for v in values], "<i4")
        out[f"o_u32_{mode}"] = array([to_integer(v, mode, 32, False) for v in values], "<u4")
    out["o_u64_rni"] = array([to_integer(v, "rni", 64, False) for v in values], "<u8")
    out["o_s16_rzi"] = array([to_integer(v, "rzi", 16, True) for v in values], "<i2")
    out["o_u8_rni"] = array([to_integer(v, "rni", 8, False) for v in values], "<u1")
    out["o_s8_rmi"] = array([to_integer(v, "rmi", 8, True) for v in values], "<i1")
    out["o_u16_rpi"] = array([to_integer(v, "rpi", 16, False) for v in values], "<u2")

    out["o_s32_f64"] = array([to_integer(times4(v), "rni", 32, True) for v in values], "<i4")
    return out


def times4(v):
    return v if v is NAN or isinstance(v, float) else v * 4


@reference("convert/float_s64")
def float_s64(inputs: Inputs) -> dict:
    (xs,) = (pyints(v) for v in inputs.cross("a"))
    values = [value_of(x, F32) for x in xs]
    return {
        "o_s64_rzi": array([to_integer(v, "rzi", 64, True) for v in values], "<i8"),
        "o_s64_f64": array([to_integer(times4(v), "rzi", 64, True) for v in values], "<i8"),
        "o_s64_rni": array([to_integer(v, "rni", 64, True) for v in values], "<i8"),
        "o_s64_f16": array([to_integer(value_of(round_to(v, F16), F16), "rzi", 64, True)
                            for v in values], "<i8"),
    }


def _floats(values, fmt) -> Expected:
    dtype = {16: "<u2", 32: "<u4", 64: "<u8"}[fmt.width]
    view = {16: "<f2", 32: "<f4", 64: "<f8"}[fmt.width]
    return Expected(array(values, dtype).view(view), nan="any")


@reference("convert/int_float")
def int_float(inputs: Inputs) -> dict:
    (xs,) = (pyints(v) for v in inputs.cross("a"))
    out = {}
    for mode in ("rn", "rz", "rm", "rp"):
        out[f"o_f32_s32_{mode}"] = _floats([round_to(Fraction(x), F32, mode) for x in xs],
                                           F32)
        out[f"o_f32_u32_{mode}"] = _floats(
            [round_to(Fraction(unsigned(x, 32)), F32, mode) for x in xs], F32)
    wide = [x << 20 for x in xs]
    out["o_f32_s64"] = _floats([round_to(Fraction(w), F32) for w in wide], F32)
    out["o_f64_u64"] = _floats([round_to(Fraction(unsigned(w, 64)), F64) for w in wide], F64)
    out["o_f64_s64_rz"] = _floats([round_to(Fraction(w), F64, "rz") for w in wide], F64)
    out["o_f16_s32"] = Expected(array([round_to(Fraction(x), F16) for x in xs], "<u2"))
    out["o_f16_u32_rz"] = Expected(array([round_to(Fraction(unsigned(x, 32)), F16, "rz")
                                          for x in xs], "<u2"))
    out["o_f64_s32"] = _floats([round_to(Fraction(x), F64) for x in xs], F64)
    return out


@reference("convert/from_f64")
def from_f64(inputs: Inputs) -> dict:
    (xs,) = (pyints(v) for v in inputs.cross("a"))
    values = [value_of(x, F64) for x in xs]
    out = {f"o_f32_{m}": _floats([round_to(v, F32, m) for v in values], F32)
           for m in ("rn", "rz", "rm", "rp")}
    out["o_f16_rn"] = Expected(array([round_to(v, F16) for v in values], "<u2").view("<f2"),
                               nan="any")
    out["o_f32_ftz"] = _floats([round_to(v, F32, ftz=True) for v in values], F32)
    return out


def _integral(bits: int, mode: str) -> int:
    """cvt.r*i.f32.f32: round to an integral value in f32 (zero keeps its sign)."""
    v = value_of(bits, F32)
    if v is NAN or isinstance(v, float):
        return bits if v is not NAN else round_to(NAN, F32)
    whole = to_integer(v, mode, 200, True)
    return round_to(Fraction(whole), F32, zero_sign=1 if v < 0 else 0)


def _tf32(bits: int) -> int:
    """cvt.rna.tf32.f32: 10 mantissa bits, nearest with ties away from zero; the result is
    the f32 pattern with its 13 low bits zero (PTX ISA 9.7.9.21, 5.2.5)."""
    v = value_of(bits, F32)
    if v is NAN:
        return 0x7FFFFFFF
    return round_to(v, TF32, "rna") << 13


def _halves(results, fmt=F16) -> Expected:
    """Half results; for f16 a NaN may be any NaN, for bf16 (held as bits) NaNs are not
    compared."""
    if fmt is F16:
        return Expected(array(results, "<u2").view("<f2"), nan="any")
    nan = np.array([value_of(r, fmt) is NAN for r in results])
    return Expected(array(results, "<u2"), unspecified=nan)


@reference("convert/from_f32")
def from_f32(inputs: Inputs) -> dict:
    (xs,) = (pyints(v) for v in inputs.cross("a"))
    values = [value_of(x, F32) for x in xs]
    out = {f"o_f16_{m}": _halves([round_to(v, F16, m) for v in values])
           for m in ("rn", "rz", "rm", "rp")}
    out["o_bf16_rn"] = _halves([round_to(v, BF16) for v in values], BF16)
    for m in ("rni", "rzi", "rmi", "rpi"):
        out[f"o_int_{m}"] = _floats([_integral(x, m) for x in xs], F32)
    out["o_f32_f16"] = _floats([round_to(value_of(round_to(v, F16), F16), F32)
                                for v in values], F32)
    out["o_f32_bf16"] = _floats([round_to(value_of(round_to(v, BF16), BF16), F32)
                                 for v in values], F32)
    out["o_f64"] = _floats([round_to(v, F64) for v in values], F64)
    # cvt.sat.f32.f32 of -0.0 may keep the sign (see float/ftz_sat): not compared
    out["o_sat"] = Expected(array([fpops.saturate(x, F32) for x in xs], "<u4").view("<f4"),
                            nan="any", unspecified=np.array([x == 0x80000000 for x in xs]))
    out["o_ftz"] = _floats([fpops.flush(x, F32) for x in xs], F32)
    return out


@reference("convert/narrow_modes")
def narrow_modes(inputs: Inputs) -> dict:
    (xs,) = (pyints(v) for v in inputs.cross("a"))
    values = [value_of(x, F32) for x in xs]
    return {
        "o_bf16_rz": _halves([round_to(v, BF16, "rz") for v in values], BF16),
        "o_tf32": Expected(array([_tf32(x) for x in xs], "<u4"),
                           unspecified=np.array([v is NAN for v in values])),
        "o_f16_satfinite": _halves([round_to(v, F16, satfinite=True) for v in values]),
        "o_bf16_satfinite": _halves([round_to(v, BF16, satfinite=True) for v in values],
                                    BF16),
    }


def _pairs(inputs: Inputs) -> list[tuple[int, int]]:
    xs, ys = (pyints(v) for v in inputs.cross("a", "b"))
    return list(zip(xs, ys, strict=True))


def _packed(results: list[tuple[int, int]], fmt, lane_bits: int = 16) -> Expected:
    """Pairs (upper, lower) packed into one element. A NaN lane may be any NaN, so an element
    with a NaN lane is not compared (its other lane is checked in other elements)."""
    values, unspecified = [], []
    for upper, lower in results:
        values.append((upper << lane_bits) | lower)
        unspecified.append(value_of(upper, fmt) is NAN or value_of(lower, fmt) is NAN)
    dtype = "<u4" if lane_bits == 16 else "<u2"
    return Expected(array(values, dtype), unspecified=np.array(unspecified))


@reference("convert/pack_x2")
def pack_x2(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    v = [(value_of(a, F32), value_of(b, F32)) for a, b in pairs]
    return {
        "o_f16x2": _packed([(round_to(a, F16), round_to(b, F16)) for a, b in v], F16),
        "o_f16x2_rz": _packed([(round_to(a, F16, "rz"), round_to(b, F16, "rz"))
                               for a, b in v], F16),
        "o_bf16x2": _packed([(round_to(a, BF16), round_to(b, BF16)) for a, b in v], BF16),
    }


def _relu(bits: int, fmt) -> int | None:
    """.relu on a converted value; None for -0.0, whose sign the ISA leaves open."""
    value = value_of(bits, fmt)
    if value is NAN:
        return 0x7FFF
    if bits == 1 << (fmt.width - 1):
        return None
    return 0 if fpops.sign_of(value) else bits


@reference("convert/relu")
def relu(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    v = [(value_of(a, F32), value_of(b, F32)) for a, b in pairs]
    f16 = [_relu(round_to(a, F16), F16) for a, _ in v]
    bf16 = [_relu(round_to(a, BF16), BF16) for a, _ in v]
    both = [(_relu(round_to(a, F16), F16), _relu(round_to(b, F16), F16)) for a, b in v]

    def single(values):
        return Expected(array([x or 0 for x in values], "<u2"),
                        unspecified=np.array([x is None or x == 0x7FFF for x in values]))

    packed = [((u or 0) << 16) | (w or 0) for u, w in both]
    loose = [u is None or w is None or u == 0x7FFF or w == 0x7FFF for u, w in both]
    return {"o_f16": single(f16), "o_bf16": single(bf16),
            "o_f16x2": Expected(array(packed, "<u4"), unspecified=np.array(loose))}


@reference("convert/fp8_pack")
def fp8_pack(inputs: Inputs) -> dict:
    pairs = _pairs(inputs)
    out = {}
    for name, fmt in (("o_e4m3", E4M3), ("o_e5m2", E5M2)):
        values = []
        for a, b in pairs:
            hi = round_to(value_of(a, F32), fmt, satfinite=True)
            lo = round_to(value_of(b, F32), fmt, satfinite=True)
            values.append((hi << 8) | lo)
        out[name] = array(values, "<u2")
    return out


@reference("convert/fp8_unpack")
def fp8_unpack(inputs: Inputs) -> dict:
    (xs,) = (pyints(v) for v in inputs.cross("a"))
    out = {}
    for name, fmt in (("o_e4m3", E4M3), ("o_e5m2", E5M2)):
        values, nan = [], []
        for x in xs:
            hi = round_to(value_of(x >> 8, fmt), F16)
            lo = round_to(value_of(x & 0xFF, fmt), F16)
            values.append((hi << 16) | lo)
            nan.append(value_of(x >> 8, fmt) is NAN or value_of(x & 0xFF, fmt) is NAN)
        out[name] = Expected(array(values, "<u4"), unspecified=np.array(nan))
    return out


@reference("convert/cvt_pack")
def cvt_pack(inputs: Inputs) -> dict:
    # 9.7.9.22: ta = sat(a), tb = sat(b) in the convert type; 16-bit types: d = ta << 16 | tb;
    # 8-bit types: d = c << 16 | ta << 8 | tb (ZLUDA's cvt_pack test, checked on CUDA
    # hardware, pins the 8-bit layout: a = -257, b = 257, c = 0xf839b0ed -> 0xb0ed00ff)
    xs, ys, zs = (pyints(v) for v in inputs.cross("a", "b", "c"))
    out = {"o_u8": [], "o_s8": [], "o_u16": [], "o_s16": []}
    for a, b, c in zip(xs, ys, zs, strict=True):
        for name, bits, is_signed in (("o_u8", 8, False), ("o_s8", 8, True)):
            ta, tb = (unsigned(saturate(v, bits, is_signed), 8) for v in (a, b))
            out[name].append(unsigned((c << 16) | (ta << 8) | tb, 32))
        for name, bits, is_signed in (("o_u16", 16, False), ("o_s16", 16, True)):
            ta, tb = (unsigned(saturate(v, bits, is_signed), 16) for v in (a, b))
            out[name].append((ta << 16) | tb)
    return {k: array(v, "<u4") for k, v in out.items()}


_INT_TYPES = ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64")


def _int_value(x: int, type_name: str) -> int:
    bits = int(type_name[1:])
    return signed(x, bits) if type_name[0] == "s" else unsigned(x, bits)


@reference("convert/sweep_ints")
def sweep_ints(inputs: Inputs) -> dict:
    # cvt.d.s: the source's bits are read as its type, then written to the destination type,
    # truncated and extended by the destination's signedness (PTX ISA 9.7.9.21)
    (xs,) = (pyints(v) for v in inputs.cross("a"))
    out = {}
    for d in _INT_TYPES:
        for s in _INT_TYPES:
            if d != s:
                out[f"o_{d}_{s}"] = array([_int_value(x, s) for x in xs], _dtype(d))
    return out


@reference("convert/sweep_floats")
def sweep_floats(inputs: Inputs) -> dict:
    xs, zs = (pyints(v) for v in inputs.cross("a", "b"))
    values = [value_of(z, F32) for z in zs]
    halves = [value_of(round_to(v, F16), F16) for v in values]
    bhalves = [value_of(round_to(v, BF16), BF16) for v in values]
    out = {}
    for d in _INT_TYPES[:-1]:  # to s64: see float_s64
        bits, is_signed = int(d[1:]), d[0] == "s"
        # the f64 operand is z widened: the same value
        out[f"o_{d}_f32"] = array([to_integer(v, "rzi", bits, is_signed) for v in values],
                                  _dtype(d))
        out[f"o_{d}_f64"] = out[f"o_{d}_f32"]
        out[f"o_{d}_f16"] = array([to_integer(v, "rzi", bits, is_signed) for v in halves],
                                  _dtype(d))
    for s in _INT_TYPES:
        ints = [Fraction(_int_value(x, s)) for x in xs]
        out[f"o_f32_{s}"] = _floats([round_to(v, F32) for v in ints], F32)
        out[f"o_f64_{s}"] = _floats([round_to(v, F64) for v in ints], F64)
        out[f"o_f16_{s}"] = _floats([round_to(v, F16) for v in ints], F16)
    out["o_f32_f64"] = _floats([round_to(v, F32) for v in values], F32)
    out["o_f32_f16"] = _floats([round_to(v, F32) for v in halves], F32)
    out["o_f32_bf16"] = _floats([round_to(v, F32) for v in bhalves], F32)
    out["o_f64_f16"] = _floats([round_to(v, F64) for v in halves], F64)
    out["o_f16_f64"] = _floats([round_to(v, F16) for v in values], F16)
    out["o_bf16_f64"] = _halves([round_to(v, BF16) for v in values], BF16)
    out["o_bf16_f16"] = _halves([round_to(v, BF16) for v in halves], BF16)
    out["o_f16_bf16"] = _floats([round_to(v, F16) for v in bhalves], F16)
    return out
