"""Generated sweeps of cvt and cvt.pack (PTX ISA 9.7.9.21 cvt, 9.7.9.22 cvt.pack): every pair
of scalar types with every rounding modifier, ``.ftz`` and ``.sat`` the ISA allows on it, the
packed half, tf32, FP8, FP6 and FP4 conversions, and cvt.pack to every narrow type.

Rules used (9.7.9.21): integer-to-integer conversions read the source's bits as its type and
write the destination's bits, truncating; ``.sat`` clamps to the destination's range (it is
allowed only where the source's range exceeds it). Float-to-integer conversions round by
``.rni/.rzi/.rmi/.rpi``, saturate to the destination's range and turn NaN into 0. Integer and
float sources are rounded to a float destination by ``.rn/.rz/.rm/.rp``; a float rounded to an
integral value of its own type by ``.rni..rpi`` keeps the sign of a zero. ``.ftz`` flushes a
subnormal .f32 source, and a subnormal .f32 result, to zero of the same sign. ``.sat`` on a
float destination clamps to [0.0, 1.0], NaN giving +0.0. ``.relu`` clamps negative results to
+0 and makes NaN the canonical NaN (the sign of a -0.0 result is not compared); ``.satfinite``
turns overflow and infinities into the largest finite value of that sign. The packed forms put
the conversion of ``a`` in the upper half (or byte, or nibble) of ``d``. FP8/FP6/FP4 NaN
results are not compared (the payload is open), nor the NaN inputs of FP6/FP4, which have no
NaN; their ``.satfinite`` is mandatory.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

from tests.conformance.reference import fpops
from tests.conformance.reference.bits import saturate, signed, unsigned
from tests.conformance.reference.convert import to_integer
from tests.conformance.reference.ieee import (
    BF16,
    E2M1,
    E2M3,
    E3M2,
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
from tests.conformance.reference.sweep_values import F32_VALUES, half_pairs, hexes
from tests.conformance.sweep import Form, Operand, Sweep, register

INTS = ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64")
FLOATS = {"f16": F16, "bf16": BF16, "f32": F32, "f64": F64}
_BITS = {"u8": 8, "s8": 8, "u16": 16, "s16": 16, "u32": 32, "s32": 32, "u64": 64, "s64": 64,
         "f16": 16, "bf16": 16, "f32": 32, "f64": 64}


def _range(type_name: str) -> tuple[int, int]:
    bits = _BITS[type_name]
    if type_name[0] == "s":
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def int_value(x: int, type_name: str) -> int:
    bits = _BITS[type_name]
    return signed(x, bits) if type_name[0] == "s" else unsigned(x, bits)


def sat_allowed(dtype: str, stype: str) -> bool:
    """cvt.sat between integers: allowed only where the source's range exceeds the
    destination's (ptxas rejects the others as an illegal modifier)."""
    (dlo, dhi), (slo, shi) = _range(dtype), _range(stype)
    return slo < dlo or shi > dhi


def _result_kind(type_name: str) -> str:
    """Float results are compared as floats (a NaN matches any NaN: its payload is open)."""
    if type_name in FLOATS:
        return type_name
    return {8: "u8", 16: "u16", 32: "u32", 64: "u64"}[_BITS[type_name]]


def _dest(type_name: str, src_is_b8: bool = False) -> str:
    """A scratch register for a destination of this type (.b8 for the 8-bit types paired
    with bf16, which ptxas accepts only in 8-bit registers)."""
    if src_is_b8:
        return "%x8"
    return {8: "%h1", 16: "%h1", 32: "%r1", 64: "%rd1"}[_BITS[type_name]]


def _store(type_name: str, register_name: str) -> str:
    """Move a scratch result into {d} of its kind."""
    bits = _BITS[type_name]
    if register_name == "%x8":
        return "cvt.u16.u8 {d}, %x8;"
    return {8: f"mov.b16 {{d}}, {register_name};", 16: f"mov.b16 {{d}}, {register_name};",
            32: f"mov.b32 {{d}}, {register_name};",
            64: f"mov.b64 {{d}}, {register_name};"}[bits]


def _src(type_name: str, stem: str = "a", b8: bool = False) -> str:
    if b8:
        return f"%{stem}8"
    return f"%{stem}{max(_BITS[type_name], 16)}"


def _needs_b8(dtype: str, stype: str) -> bool:
    return "bf16" in (dtype, stype) and (_BITS[dtype] == 8 or _BITS[stype] == 8)


def _float_result(value, fmt, mode: str, *, ftz: bool = False, sat: bool = False,
                  relu: bool = False, satfinite: bool = False, zero_sign: int = 0):
    """An exact value rounded to ``fmt`` with the destination modifiers; None where the ISA
    leaves the bits open (a -0.0 under .sat or .relu)."""
    bits = round_to(value, fmt, mode, ftz=ftz, satfinite=satfinite, zero_sign=zero_sign)
    if sat:
        if bits == 1 << (fmt.width - 1):
            return None
        return fpops.saturate(bits, fmt)
    if relu:
        v = value_of(bits, fmt)
        if v is NAN:
            return (1 << (fmt.width - 1)) - 1 if fmt.ieee else None
        if bits == 1 << (fmt.width - 1):
            return None
        return 0 if fpops.sign_of(v) else bits
    return bits


@cache
def decoded(bits: int, type_name: str, ftz: bool = False):
    fmt = FLOATS[type_name]
    return fpops.decode(bits & ((1 << fmt.width) - 1), fmt, ftz)


def _integral(bits: int, type_name: str, mode: str, sat: bool = False):
    """cvt.r*i.F.F: the value rounded to an integral value in its own format."""
    v = decoded(bits, type_name)
    fmt = FLOATS[type_name]
    if v is NAN:
        result = round_to(NAN, fmt)
    elif isinstance(v, float):
        result = round_to(v, fmt)
    else:
        whole = to_integer(v, mode, 4096, True)
        result = round_to(Fraction(whole), fmt, zero_sign=1 if v < 0 else 0)
    if sat:
        return None if result == 1 << (fmt.width - 1) else fpops.saturate(result, fmt)
    return result


# -- integer sources --------------------------------------------------------------------

INT_CVT_VALUES = hexes([
    0x0, 0x1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
    0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0x180018001,
    0x101,          # 257: a tie in bf16 (8 significant bits)
    0x103,          # 259: a tie rounding up in bf16
    0x801,          # 2049: a tie in f16 (11 significant bits)
    0xFFF0,         # 65520: f16 overflows to infinity in .rn, 65504 in .rz
    0x1000001,      # 2^24 + 1: a tie in f32
    0x1000003,
    0x20000000000001,  # 2^53 + 1: a tie in f64
    0xFFFFFFFFFFFFFFFD, 0xFFFFFFFF7FFFFFFF,
])

int_source = Sweep("convert", "gen_cvt_int",
                   "cvt from every integer type to every integer type (with .sat where it "
                   "applies) and to every float type in every rounding mode, and .sat "
                   "(PTX ISA 9.7.9.21).", [Operand("a", "u64", INT_CVT_VALUES)])
for _d in INTS:
    for _s in INTS:
        for _sat in (False, True):
            if _sat and not sat_allowed(_d, _s):
                continue
            _reg = _dest(_d)
            _code = (f"cvt{'.sat' if _sat else ''}.{_d}.{_s} {_reg}, {_src(_s)};\n"
                     + _store(_d, _reg))

            def _ref(th, d=_d, s=_s, sat=_sat):
                v = int_value(th.a, s)
                lo, hi = _range(d)
                return max(lo, min(hi, v)) if sat else v

            int_source.forms.append(Form(_result_kind(_d), _code, _ref))
for _d, _fmt in FLOATS.items():
    for _s in INTS:
        _b8 = _needs_b8(_d, _s)
        for _mode in ("rn", "rz", "rm", "rp"):
            _code = f"cvt.{_mode}.{_d}.{_s} {_dest(_d)}, {_src(_s, b8=_b8)};\n" + \
                _store(_d, _dest(_d))
            int_source.forms.append(Form(
                _result_kind(_d), _code,
                lambda th, s=_s, fmt=_fmt, m=_mode: round_to(Fraction(int_value(th.a, s)),
                                                             fmt, m)))
        if _d != "bf16":
            _code = f"cvt.rn.sat.{_d}.{_s} {_dest(_d)}, {_src(_s, b8=_b8)};\n" + \
                _store(_d, _dest(_d))
            int_source.forms.append(Form(
                _result_kind(_d), _code,
                lambda th, s=_s, fmt=_fmt: _float_result(Fraction(int_value(th.a, s)), fmt,
                                                         "rn", sat=True)))
register(int_source)

# -- float sources ----------------------------------------------------------------------

F32_CVT_VALUES = F32_VALUES + hexes([
    0x3F000000, 0xBF000000, 0x40200000, 0xC0200000,  # +-0.5, +-2.5: ties of .rni
    0x3FBFFFFF,     # just under 1.5
    0x3727C5AC,     # 1e-5: .rpi gives 1
    0x477FE000, 0x477FF000,  # 65504 (f16 max), 65520 (f16 .rn overflow)
    0x3F801000, 0x3F803000,  # 1 + 2^-11, 1 + 3 2^-11: f16 ties
    0x3F808000, 0x3F818000,  # 1 + 2^-8, 1 + 3 2^-8: bf16 ties
    0x4F000000, 0xCF000000, 0x4F800000, 0x4F32D05E, 0x60AD78EC,  # 2^31, -2^31, 2^32, 3e9, 1e20
    0x43966666, 0xC3018000, 0x47886000,  # 300.8, -129.5, 69824
    0x38800000, 0x33800000, 0x33000000, 0x33400000,  # f16 min normal, min subnormal, ties
    0xFFC00000,
])
F64_CVT_VALUES = hexes([
    0x0, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x3FE0000000000000,
    0xBFE0000000000000, 0x3FF8000000000000, 0x4004000000000000, 0xC004000000000000,
    0x0000000000000001, 0x800FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF,
    0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000,
    0x3FF0000010000000,  # 1 + 2^-24: an f32 tie
    0x3FF0000030000000,  # 1 + 3 2^-24
    0x3FF0000010000001,  # just above the tie
    0x47EFFFFFE0000000,  # f32 max + half an ulp: overflows in .rn
    0x36A0000000000000, 0x3690000000000000, 0x36A8000000000000,  # 2^-149, 2^-150, 1.5 2^-149
    0x3800000000000000,  # 2^-127: an f32 subnormal
    0x43E0000000000000, 0xC3E0000000000000, 0x43F0000000000000,  # 2^63, -2^63, 2^64
    0x7E37E43C8800759C,  # 1e300
    0x40EFFE0000000000,  # 65520
    0x4072CB3333333333, 0xC060300000000000,  # 300.7, -129.5
    0x41EFFFFFFFF00000, 0x41DFFFFFFFE00000,  # 2^32 - 0.5, 2^31 - 0.5
    0x3F1A36E2EB1C432D,  # 1e-4
])
F16_CVT_VALUES = hexes([
    0x0000, 0x8000, 0x3C00, 0xBC00, 0x3800, 0xB800, 0x3E00, 0xBE00, 0x4100, 0xC100,
    0x0001, 0x83FF, 0x0400, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0xFE00,
    0x3C01, 0x3C02, 0x3C04, 0x3C0C,  # 1 + 2^-10 ..: bf16 ties and near-ties
    0x5BFC, 0x5C00, 0x5CB3, 0xD80C,  # 255.5, 256, 300.75, -129.5
    0x77FF, 0x0200,
])
BF16_CVT_VALUES = hexes([
    0x0000, 0x8000, 0x3F80, 0xBF80, 0x3F00, 0xBF00, 0x3FC0, 0xBFC0, 0x4020, 0xC020,
    0x0001, 0x807F, 0x0080, 0x7F7F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0,
    0x4780, 0x477F, 0x477F, 0x3727, 0x437F, 0x4380, 0x4396, 0xC301,
    0x4F00, 0x4F80, 0x5F00, 0x5F80, 0xDF00, 0x3F81, 0x3380, 0x3300, 0x3340,
])


def _float_source(name: str, stype: str, values, ftz_source: bool) -> Sweep:
    fmt = FLOATS[stype]
    sweep = Sweep("convert", name,
                  f"cvt from .{stype} to every integer type in every integer rounding mode, "
                  f"to every float type in every rounding mode the ISA allows, to .{stype} as "
                  "an integral value, with .ftz and .sat where they apply (PTX ISA 9.7.9.21).",
                  [Operand("a", {16: "u16", 32: "u32", 64: "u64"}[fmt.width], values)])
    src = f"%a{max(fmt.width, 16)}"
    for d in INTS:
        b8 = _needs_b8(d, stype)
        reg = _dest(d, b8)
        for mode in ("rni", "rzi", "rmi", "rpi"):
            sweep.forms.append(Form(
                _result_kind(d), f"cvt.{mode}.{d}.{stype} {reg}, {src};\n" + _store(d, reg),
                lambda th, m=mode, d=d: to_integer(decoded(th.a, stype), m, _BITS[d],
                                                   d[0] == "s")))
        mods = ["sat"] if stype != "bf16" else []
        if ftz_source:
            mods.append("ftz")
        for mod in mods:
            sweep.forms.append(Form(
                _result_kind(d), f"cvt.rpi.{mod}.{d}.{stype} {reg}, {src};\n" + _store(d, reg),
                lambda th, d=d, f=mod == "ftz": to_integer(decoded(th.a, stype, f), "rpi",
                                                           _BITS[d], d[0] == "s")))
    for d, dfmt in FLOATS.items():
        reg = _dest(d)
        widening = dfmt.width > fmt.width or (d == "f32" and stype in ("f16", "bf16"))
        if d == stype:
            for mode in ("rni", "rzi", "rmi", "rpi"):
                sweep.forms.append(Form(
                    _result_kind(d), f"cvt.{mode}.{d}.{stype} {reg}, {src};\n"
                    + _store(d, reg), lambda th, m=mode: _integral(th.a, stype, m)))
            plain = [("", {})]
            if stype != "bf16":
                plain.append((".sat", {"sat": True}))
            if d == "f32":
                plain.append((".ftz", {"ftz": True}))
            for mod, flags in plain:
                sweep.forms.append(Form(
                    _result_kind(d), f"cvt{mod}.{d}.{stype} {reg}, {src};\n" + _store(d, reg),
                    lambda th, flags=flags: _float_result(
                        decoded(th.a, stype, flags.get("ftz", False)), dfmt_of(stype), "rn",
                        **flags)))
            continue
        modes = ("rn", "rz", "rm", "rp")
        if widening:
            modes = ("", *modes) if stype == "bf16" else ("",)
        for mode in modes:
            prefix = f".{mode}" if mode else ""
            sweep.forms.append(Form(
                _result_kind(d), f"cvt{prefix}.{d}.{stype} {reg}, {src};\n" + _store(d, reg),
                lambda th, m=mode or "rn", dfmt=dfmt: round_to(decoded(th.a, stype), dfmt, m)))
        mode = "" if widening and stype != "bf16" else ".rn"
        extra = []
        if "bf16" not in (d, stype):
            extra.append(("sat", {"sat": True}))
        if "f32" in (d, stype):
            extra.append(("ftz", {"ftz": True}))
        for mod, flags in extra:
            saturating = flags.get("sat", False)
            flush_in = flags.get("ftz", False) and stype == "f32"
            flush_out = flags.get("ftz", False) and d == "f32"
            sweep.forms.append(Form(
                _result_kind(d), f"cvt{mode}.{mod}.{d}.{stype} {reg}, {src};\n"
                + _store(d, reg),
                lambda th, dfmt=dfmt, sat=saturating, fi=flush_in, fo=flush_out:
                _float_result(decoded(th.a, stype, fi), dfmt, "rn", ftz=fo, sat=sat)))
    return sweep


def dfmt_of(type_name: str):
    return FLOATS[type_name]


def _register_float_source(name: str, stype: str, values, ftz_source: bool) -> None:
    """The sweep of one source type, its conversions to .s64 in a case of their own, and the
    .ftz conversions between .f32 and .f16 in another (both disagree with the emulator today,
    xfails.py)."""
    sweep = _float_source(name, stype, values, ftz_source)
    register(sweep.split(f"{name}_s64", lambda f: f".s64.{stype} " in f.code,
                         f"cvt from .{stype} to .s64 in every integer rounding mode, with .sat "
                         "(PTX ISA 9.7.9.21): out-of-range values saturate to MININT..MAXINT."))
    if stype in ("f32", "f16"):
        register(sweep.split(
            f"{name}_ftz_half", lambda f: ".ftz." in f.code and ".f16" in f.code.split()[0],
            f"cvt between .{stype} and .f16 with .ftz (PTX ISA 9.7.9.21): .ftz flushes "
            "single-precision subnormal inputs and results only; f16 subnormals are kept."))
    register(sweep)


_register_float_source("gen_cvt_f32", "f32", F32_CVT_VALUES, True)
_register_float_source("gen_cvt_f64", "f64", F64_CVT_VALUES, False)
_register_float_source("gen_cvt_f16", "f16", F16_CVT_VALUES, False)
_register_float_source("gen_cvt_bf16", "bf16", BF16_CVT_VALUES, False)

# -- packed and narrow formats ----------------------------------------------------------

PAIR_VALUES = hexes([0x00000000, 0x80000000, 0x3F800000, 0xC0200000, 0x00000001, 0x3F801000,
                     0x3F808000, 0x477FF000, 0x7F7FFFFF, 0xFF800000, 0x7FC00000, 0x43E00000,
                     0x3E000000, 0xC1A00000])


def _lanes(upper, lower, bits: int):
    """Two lane results packed, or per-lane values when one is open."""
    if upper is None or lower is None:
        return (lower, upper)
    return (upper << bits) | lower


packed = Sweep("convert", "gen_cvt_packed",
               "cvt of two .f32 values to .f16x2 and .bf16x2 (.rn, .rz, .relu, .satfinite), "
               "to .e4m3x2 and .e5m2x2 (.relu), and of one to .tf32 (.rn, .rz, .rna, .relu, "
               ".satfinite) (PTX ISA 9.7.9.21).",
               [Operand("a", "u32", PAIR_VALUES), Operand("b", "u32", PAIR_VALUES)],
               target="sm_100a")
for _x2, _fmt in (("f16x2", F16), ("bf16x2", BF16)):
    for _mode in ("rn", "rz"):
        for _relu in (False, True):
            for _satf in (False, True):
                _mods = f".{_mode}" + (".relu" if _relu else "") + (".satfinite" if _satf else "")
                packed.forms.append(Form(
                    _x2, f"cvt{_mods}.{_x2}.f32 {{d}}, %a32, %b32;",
                    lambda th, fmt=_fmt, m=_mode, r=_relu, s=_satf: _lanes(
                        _float_result(value_of(th.a, F32), fmt, m, relu=r, satfinite=s),
                        _float_result(value_of(th.b, F32), fmt, m, relu=r, satfinite=s), 16)))


def _fp8(value, fmt, relu: bool):
    bits = round_to(value, fmt, "rn", satfinite=True)
    v = value_of(bits, fmt)
    if v is NAN:
        return None
    if relu:
        if bits == 1 << 7:
            return None
        return 0 if fpops.sign_of(v) else bits
    return bits


for _name, _fmt in (("e4m3x2", E4M3), ("e5m2x2", E5M2)):
    for _relu in (False, True):
        packed.forms.append(Form(
            "u16", f"cvt.rn.satfinite{'.relu' if _relu else ''}.{_name}.f32 {{d}}, %a32, %b32;",
            lambda th, fmt=_fmt, r=_relu: _pack8(_fp8(value_of(th.a, F32), fmt, r),
                                                 _fp8(value_of(th.b, F32), fmt, r))))


def _pack8(upper, lower):
    return None if upper is None or lower is None else (upper << 8) | lower


def _tf32(bits: int, mode: str, relu: bool, satfinite: bool):
    v = value_of(bits, F32)
    if v is NAN:
        return None
    result = _float_result(v, TF32, mode, relu=relu, satfinite=satfinite)
    return None if result is None else result << 13


for _mode, _relu, _satf in (("rna", False, False), ("rna", False, True), ("rn", False, True),
                            ("rz", False, True), ("rn", True, True), ("rz", True, False),
                            ("rn", True, False)):
    _mods = f".{_mode}" + (".satfinite" if _satf else "") + (".relu" if _relu else "")
    packed.forms.append(Form("u32", f"cvt{_mods}.tf32.f32 {{d}}, %a32;",
                             lambda th, m=_mode, r=_relu, s=_satf: _tf32(th.a, m, r, s)))
register(packed)

fp8 = Sweep("convert", "gen_cvt_fp8",
            "cvt of .f16x2 to .e4m3x2 and .e5m2x2 (.satfinite, .relu), and of .e4m3x2 and "
            ".e5m2x2 to .f16x2 (.relu) (PTX ISA 9.7.9.21). Operand a holds two f16 values "
            "(lower half: value k, upper: value k + 5); its low 16 bits are also read as two "
            "FP8 values.",
            [Operand("a", "u32", half_pairs(F16_CVT_VALUES) + hexes(
                [0x7F7E, 0xFF80, 0x0180, 0x7C7B, 0xFC01, 0x5A3F, 0x0807, 0x8F88]))])


def _from_half(bits: int, fmt, relu: bool):
    return _fp8(value_of(bits, F16), fmt, relu)


def _to_half(bits: int, fmt, relu: bool):
    v = value_of(bits, fmt)
    if v is NAN:
        return None
    return _float_result(v, F16, "rn", relu=relu)


for _name, _fmt in (("e4m3x2", E4M3), ("e5m2x2", E5M2)):
    for _relu in (False, True):
        fp8.forms.append(Form(
            "u16", f"cvt.rn.satfinite{'.relu' if _relu else ''}.{_name}.f16x2 {{d}}, %a32;",
            lambda th, fmt=_fmt, r=_relu: _pack8(_from_half(th.a >> 16, fmt, r),
                                                 _from_half(th.a & 0xFFFF, fmt, r))))
        fp8.forms.append(Form(
            "f16x2", f"cvt.rn{'.relu' if _relu else ''}.f16x2.{_name} {{d}}, %a16;",
            lambda th, fmt=_fmt, r=_relu: (_to_half((th.a >> 0) & 0xFF, fmt, r),
                                           _to_half((th.a >> 8) & 0xFF, fmt, r))))
register(fp8)

narrow = Sweep("convert", "gen_cvt_fp6_fp4",
               "cvt of two .f32 values to .e2m1x2, .e2m3x2 and .e3m2x2 (.satfinite, .relu), "
               "and of those to .f16x2 (.relu) (PTX ISA 9.7.9.21; the formats: 5.2.5.2).",
               [Operand("a", "u32", PAIR_VALUES[:10] + hexes([0x40A00000, 0x3F400000,
                                                              0x41E00000, 0x3D800000])),
                Operand("b", "u32", hexes([0x3F800000, 0xBF000000, 0x40400000, 0x3E800000,
                                           0x7F800000, 0x00000000, 0x80000000, 0x41200000]))],
               target="sm_100a")


def _fp46(bits: int, fmt, relu: bool):
    v = value_of(bits, F32)
    if v is NAN:
        return None
    result = round_to(v, fmt, "rn", satfinite=True)
    if relu:
        if result == 1 << (fmt.width - 1):
            return None
        return 0 if result >> (fmt.width - 1) else result
    return result


for _name, _fmt, _kind, _reg, _shift in (("e2m1x2", E2M1, "b8", "%d8", 4),
                                         ("e2m3x2", E2M3, "u16", "{d}", 8),
                                         ("e3m2x2", E3M2, "u16", "{d}", 8)):
    for _relu in (False, True):
        narrow.forms.append(Form(
            _kind, f"cvt.rn.satfinite{'.relu' if _relu else ''}.{_name}.f32 {_reg}, %a32, %b32;",
            lambda th, fmt=_fmt, r=_relu, sh=_shift: _pack_narrow(
                _fp46(th.a, fmt, r), _fp46(th.b, fmt, r), sh)))


def _pack_narrow(upper, lower, shift):
    return None if upper is None or lower is None else (upper << shift) | lower


def _narrow_to_half(code: int, fmt, relu: bool):
    return _float_result(value_of(code, fmt), F16, "rn", relu=relu)


def _codes(i: int) -> int:
    """The 16 bits the unpacking forms convert in thread i (i times 2533, odd, so that the
    low byte runs through every value)."""
    return (i * 2533) & 0xFFFF


# the unpacking direction converts codes made from the thread index (the 2 high bits of each
# FP6 byte are zero, as the ISA requires of the source)
_CODES = "mul.lo.u32 %r2, %gi, 2533;\ncvt.u16.u32 %h2, %r2;\n"
for _name, _fmt, _shift, _mask in (("e2m1x2", E2M1, 4, 0xF), ("e2m3x2", E2M3, 8, 0x3F),
                                   ("e3m2x2", E3M2, 8, 0x3F)):
    for _relu in (False, True):
        if _mask == 0x3F:
            _pre, _operand = _CODES + "and.b16 %h2, %h2, 0x3f3f;\n", "%h2"
        else:
            _pre, _operand = _CODES + "cvt.u8.u16 %x8, %h2;\n", "%x8"
        narrow.forms.append(Form(
            "f16x2", f"{_pre}cvt.rn{'.relu' if _relu else ''}.f16x2.{_name} {{d}}, {_operand};",
            lambda th, fmt=_fmt, r=_relu, sh=_shift, mk=_mask: (
                _narrow_to_half(_codes(th.i) & mk, fmt, r),
                _narrow_to_half((_codes(th.i) >> sh) & mk, fmt, r))))
register(narrow)

# -- cvt.pack ---------------------------------------------------------------------------

PACK_VALUES = hexes([0x0, 0x1, 0x2, 0x3, 0x7, 0x8, 0xF, 0x10, 0x7F, 0x80, 0x7FFF, 0x8000,
                     0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFF8, 0xFFFFFFF7, 0x7FFFFFFF, 0x80000000])

pack = Sweep("convert", "gen_cvt_pack",
             "cvt.pack.sat to every narrow integer type (PTX ISA 9.7.9.22): a and b clamped "
             "to the type's range and packed, a above b, above the low bits of c.",
             [Operand("a", "u32", PACK_VALUES), Operand("b", "u32", PACK_VALUES[::-1][:9]),
              Operand("c", "u32", hexes([0xF839B0ED, 0x0]))])
for _t, _bits in (("u2", 2), ("s2", 2), ("u4", 4), ("s4", 4), ("u8", 8), ("s8", 8)):
    pack.forms.append(Form(
        "u32", f"cvt.pack.sat.{_t}.s32.b32 {{d}}, %a32, %b32, %c32;",
        lambda th, bits=_bits, sgn=_t[0] == "s": unsigned(
            (th.c << (2 * bits))
            | (unsigned(saturate(signed(th.a, 32), bits, sgn), bits) << bits)
            | unsigned(saturate(signed(th.b, 32), bits, sgn), bits), 32)))
for _t in ("u16", "s16"):
    pack.forms.append(Form(
        "u32", f"cvt.pack.sat.{_t}.s32 {{d}}, %a32, %b32;",
        lambda th, sgn=_t[0] == "s": (unsigned(saturate(signed(th.a, 32), 16, sgn), 16) << 16)
        | unsigned(saturate(signed(th.b, 32), 16, sgn), 16)))
register(pack)

