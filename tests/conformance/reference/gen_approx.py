"""Generated sweeps of the approximate instructions, each checked within the precision the PTX
ISA (version 9.1) states for it, and exactly on the corner cases its tables list:

==========================  ===========================================================
ex2.approx.f16/.f16x2       relative error at most 2^-9.9 (9.7.4.10)
ex2.approx.ftz.bf16/x2      relative error at most 2^-7; subnormals flushed (9.7.4.10)
tanh.approx.f16/.f16x2      absolute error at most 2^-10.987 (9.7.4.9)
tanh.approx.bf16/.bf16x2    absolute error at most 2^-8 (9.7.4.9)
ex2.approx.ftz.f32          at most 2 ulp from the correctly rounded result (9.7.3.21)
lg2.approx.ftz.f32          absolute error 2^-22 on (0.5, 2), relative 2^-22 elsewhere
                            (9.7.3.20)
cos.approx.ftz.f32          absolute error 2^-20.5 on [-2 pi, 2 pi] (9.7.3.19)
rsqrt.approx.ftz.f32        relative error at most 2^-22.9 (9.7.3.16)
rcp.approx.ftz.f64          1 / (a's upper word) in the upper word, lower word zero
                            (9.7.3.14): checked within 2^-18 relative
rsqrt.approx{.ftz}.f64      no bound stated (9.7.3.16, 9.7.3.17): checked within 2^-18
                            relative
==========================  ===========================================================

Expected values are the exact function (double-precision library functions, far more accurate
than these bounds) rounded to the result's format, so the half-precision bounds get half a
unit in the last place added. The two f64 approximations with no stated bound are checked
loosely (the margin is this suite's choice, not the ISA's), their corner cases exactly.
"""

from __future__ import annotations

import math
from fractions import Fraction

from tests.conformance.reference import fpops
from tests.conformance.reference.ieee import BF16, F16, F32, F64, NAN, round_to, value_of
from tests.conformance.reference.sweep_values import half_pairs, hexes
from tests.conformance.sweep import Form, Operand, Sweep, register


def _float(bits: int, fmt) -> float:
    v = value_of(bits, fmt)
    if v is NAN:
        return math.nan
    return float(v)


def _rounded(x: float, fmt, ftz: bool = False) -> int:
    if math.isnan(x):
        return round_to(NAN, fmt)
    if math.isinf(x) or x == 0:
        return round_to(x, fmt)
    return round_to(Fraction(x), fmt, ftz=ftz)


def _ex2(x: float) -> float:
    if math.isinf(x):
        return 0.0 if x < 0 else math.inf
    if math.isnan(x):
        return math.nan
    try:
        return 2.0 ** x
    except OverflowError:
        return math.inf


def _half_op(function, fmt, ftz: bool):
    def lane(bits: int) -> int:
        x = fpops.flush(bits, fmt) if ftz else bits
        return _rounded(function(_float(x, fmt)), fmt, ftz)
    return lane


def _half_sweep(name: str, op: str, type_name: str, fmt, values, function, ftz: bool,
                tolerance: dict) -> Sweep:
    x2 = f"{type_name}x2"
    mods = ".approx.ftz" if ftz else ".approx"
    lane = _half_op(function, fmt, ftz)
    sweep = Sweep("float", name,
                  f"{op}{mods} on .{type_name} and .{x2} within the ISA's bound (PTX ISA "
                  f"{'9.7.4.10' if op == 'ex2' else '9.7.4.9'}).",
                  [Operand("a", "u32", half_pairs(values))], tolerance=tolerance)
    sweep.forms.append(Form(type_name, f"{op}{mods}.{type_name} {{d}}, %a16;",
                            lambda th: lane(th.a & 0xFFFF)))
    sweep.forms.append(Form(x2, f"{op}{mods}.{x2} {{d}}, %a32;",
                            lambda th: (lane(th.a & 0xFFFF), lane(th.a >> 16))))
    return sweep


_F16_IN = hexes([0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x8001, 0x3C00, 0xBC00,
                 0x3800, 0x4B80, 0xCB80, 0x4900, 0xC900, 0x2E66, 0xB266, 0x4A00, 0x3555,
                 0xD200, 0x5A00])
_BF16_IN = hexes([0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x0001, 0x8001, 0x3F80, 0xBF80,
                  0x3F00, 0x4170, 0xC170, 0x4120, 0xC120, 0x3DCD, 0xBE4D, 0x42C8, 0xC2F0,
                  0x3EAB, 0x4040])
_F16_ULP = 2.0 ** -11
_BF16_ULP = 2.0 ** -8

register(_half_sweep("gen_approx_ex2_f16", "ex2", "f16", F16, _F16_IN, _ex2, False,
                     {"rel": 2.0 ** -9.9 + _F16_ULP}))
register(_half_sweep("gen_approx_ex2_bf16", "ex2", "bf16", BF16, _BF16_IN, _ex2, True,
                     {"rel": 2.0 ** -7 + _BF16_ULP}))
# results below the smallest normal bf16 (2^-126) are flushed to +0.0
register(_half_sweep("gen_approx_ex2_bf16_ftz", "ex2", "bf16", BF16,
                     hexes([0xC302, 0xC30C, 0xC2FE, 0xC300, 0x8001, 0x0001]), _ex2, True,
                     {"rel": 2.0 ** -7 + _BF16_ULP}))
register(_half_sweep("gen_approx_tanh_f16", "tanh", "f16", F16, _F16_IN, math.tanh, False,
                     {"abs": 2.0 ** -10.987 + _F16_ULP / 2}))
register(_half_sweep("gen_approx_tanh_bf16", "tanh", "bf16", BF16, _BF16_IN, math.tanh, False,
                     {"abs": 2.0 ** -8 + _BF16_ULP / 2}))

# -- single precision, flushing subnormals ----------------------------------------------

_F32_SPECIAL = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x00000001,
                0x807FFFFF]


def _f32_sweep(name: str, instruction: str, function, values, tolerance: dict,
               section: str) -> Sweep:
    def ref(th):
        x = _float(fpops.flush(th.a & 0xFFFFFFFF, F32), F32)
        return _rounded(function(x), F32, ftz=True)

    sweep = Sweep("float", name, f"{instruction} within the ISA's bound, subnormal inputs and "
                  f"results flushed (PTX ISA {section}).",
                  [Operand("a", "u32", hexes(_F32_SPECIAL + values))], tolerance=tolerance)
    sweep.forms.append(Form("f32", f"{instruction} {{d}}, %a32;", ref))
    return sweep


def _lg2(x: float) -> float:
    if math.isnan(x) or x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    return math.inf if math.isinf(x) else math.log2(x)


def _cos(x: float) -> float:
    return math.nan if math.isinf(x) or math.isnan(x) else math.cos(x)


def _rsqrt(x: float) -> float:
    if math.isnan(x) or x < 0:
        return math.nan
    if x == 0:
        return math.copysign(math.inf, x)
    return 0.0 if math.isinf(x) else 1.0 / math.sqrt(x)


register(_f32_sweep("gen_approx_ex2_f32", "ex2.approx.ftz.f32", _ex2,
                    [0x3F800000, 0xBF800000, 0x3FC00000, 0x42FE0000, 0xC2FC0000, 0xC3010000,
                     0xC3200000, 0x43000000, 0x3DCCCCCD, 0xC1A80000], {"ulp": 2}, "9.7.3.21"))
register(_f32_sweep("gen_approx_lg2_f32", "lg2.approx.ftz.f32", _lg2,
                    [0x3F800000, 0x3F000001, 0x3FFFFFFF, 0x40000000, 0x00800000, 0x7F7FFFFF,
                     0xBF800000, 0x3F3504F3, 0x41200000, 0x2F800000],
                    {"abs": 2.0 ** -22, "rel": 2.0 ** -22}, "9.7.3.20"))
register(_f32_sweep("gen_approx_cos_f32", "cos.approx.ftz.f32", _cos,
                    [0x3F800000, 0xBF800000, 0x40490FDB, 0xC0490FDB, 0x40C90FDB, 0xC0C90FDA,
                     0x3FC90FDB, 0x3E800000, 0x40A00000, 0xC0400000],
                    {"abs": 2.0 ** -20.5}, "9.7.3.19"))
register(_f32_sweep("gen_approx_rsqrt_f32", "rsqrt.approx.ftz.f32", _rsqrt,
                    [0x3F800000, 0x40800000, 0x3E800000, 0x00800000, 0x7F7FFFFF, 0xBF800000,
                     0x40000000, 0x4B000001, 0x33D6BF95, 0x3F7FFFFF],
                    {"rel": 2.0 ** -22.9}, "9.7.3.16"))

# -- double precision -------------------------------------------------------------------

_F64_IN = [0x0, 0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
           0x7FF8000000000000, 0x0000000000000001, 0x800FFFFFFFFFFFFF, 0x3FF0000000000000,
           0xBFF0000000000000, 0x4000000000000000, 0x3FF8000000000000, 0x4024000000000000,
           0x3FB999999999999A, 0x7FEFFFFFFFFFFFFF, 0x0010000000000000, 0x3FF00000FFFFFFFF,
           0x4341C37937E08000, 0xC00921FB54442D18]


def _rcp_approx(bits: int) -> int | None:
    """9.7.3.14: 1 / (a's upper word read as a 1.11.20 value), upper word only; subnormal
    inputs and results flushed; NaN gives 0x7fffffff00000000."""
    upper = bits & 0xFFFFFFFF00000000
    x = value_of(fpops.flush(upper, F64), F64)
    if x is NAN:
        return 0x7FFFFFFF00000000
    if isinstance(x, float):
        exact = math.copysign(0.0, x) if math.isinf(x) else math.copysign(math.inf, x)
        return round_to(exact, F64)
    return round_to(1 / x, F64, ftz=True)


def _rsqrt64(bits: int, ftz: bool) -> int:
    x = value_of(fpops.flush(bits, F64) if ftz else bits, F64)
    if x is NAN:
        return round_to(NAN, F64)
    if isinstance(x, float):
        if x == 0:
            return round_to(math.copysign(math.inf, x), F64)
        return round_to(0.0 if x > 0 else NAN, F64)
    if x < 0:
        return round_to(NAN, F64)
    return _rounded(1.0 / math.sqrt(float(x)), F64, ftz)


f64_sweep = Sweep("float", "gen_approx_f64",
                  "rcp.approx.ftz.f64 (PTX ISA 9.7.3.14), rsqrt.approx.f64 and "
                  "rsqrt.approx.ftz.f64 (9.7.3.16, 9.7.3.17): corner cases exactly, other "
                  "values within 2^-18 relative (the ISA states no bound).",
                  [Operand("a", "u64", hexes(_F64_IN))], tolerance={"rel": 2.0 ** -18})
f64_sweep.forms.append(Form("f64", "rcp.approx.ftz.f64 {d}, %a64;", lambda th: _rcp_approx(th.a)))
f64_sweep.forms.append(Form(
    "u32", "rcp.approx.ftz.f64 %rd1, %a64;\ncvt.u32.u64 {d}, %rd1;", lambda th: 0,
    note="the lower word of rcp.approx.ftz.f64 is zero"))
f64_sweep.forms.append(Form("f64", "rsqrt.approx.f64 {d}, %a64;",
                            lambda th: _rsqrt64(th.a, False)))
f64_sweep.forms.append(Form("f64", "rsqrt.approx.ftz.f64 {d}, %a64;",
                            lambda th: _rsqrt64(th.a, True)))
register(f64_sweep.split("gen_approx_rsqrt_ftz_f64", lambda f: "rsqrt.approx.ftz" in f.code,
                         "rsqrt.approx.ftz.f64 (PTX ISA 9.7.3.17): corner cases exactly, other "
                         "values within 2^-18 relative (the ISA states no bound)."))
register(f64_sweep.split("gen_approx_rcp_f64", lambda f: "rcp.approx" in f.code,
                         "rcp.approx.ftz.f64 (PTX ISA 9.7.3.14): the reciprocal of a's upper "
                         "word in the upper word, the lower word zero, subnormals flushed; corner "
                         "cases exactly, other values within 2^-18 relative."))
register(f64_sweep)
