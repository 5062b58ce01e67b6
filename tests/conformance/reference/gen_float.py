"""Generated sweeps of the single- and double-precision instructions the other float cases leave
out: mad.f32 and mad.f64 (PTX ISA 9.7.3.6: mad.rnd is a fused multiply-add, like fma), sub,
div, sqrt and rcp .f64 in the directed rounding modes (9.7.3.2, 9.7.3.8, 9.7.3.15, 9.7.3.13),
and max.ftz.f32 (9.7.3.12).

Results are rounded once from the exact value (reference/ieee.py) in the instruction's mode;
.ftz flushes subnormal .f32 inputs and results to zero of the same sign; .sat clamps to [0.0,
1.0] with NaN giving +0.0 (a -0.0 result's sign is not compared); an exact zero sum is +0.0,
or -0.0 rounding toward negative infinity (IEEE 754 6.3). max returns the number when one
operand is NaN; the order of +0.0 and -0.0 is not compared.
"""

from __future__ import annotations

from functools import cache

from tests.conformance.reference import fpops
from tests.conformance.reference.ieee import F32, F64, round_to
from tests.conformance.reference.sweep_values import hexes
from tests.conformance.sweep import Form, Operand, Sweep, register

MODES = ("rn", "rz", "rm", "rp")

_F32 = hexes([0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3EAAAAAB, 0xBEAAAAAB,
              0x3F8CCCCD, 0x7F7FFFFF, 0x00800000, 0x00000003, 0x7F800000, 0x7FC00000])
_F32_C = hexes([0x00000000, 0x3F800001, 0x80800000])
_F64 = hexes([0x0, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000,
              0x3FD5555555555555, 0xBFD5555555555555, 0x3FF199999999999A, 0x7FEFFFFFFFFFFFFF,
              0x0010000000000000, 0x0000000000000003, 0x7FF0000000000000, 0x7FF8000000000000])
_F64_C = hexes([0x0, 0x3FF0000000000001, 0x8010000000000000])


@cache
def _fma(a: int, b: int, c: int, fmt, mode: str, ftz: bool, sat: bool) -> int | None:
    result = fpops.fma(a, b, c, fmt, mode, ftz, sat)
    if sat and result == 0 and fpops.fma(a, b, c, fmt, mode, ftz) == 1 << (fmt.width - 1):
        return None
    return result


def _low(x: int, fmt) -> int:
    return x & ((1 << fmt.width) - 1)


def _mad_sweep(name: str, type_name: str, fmt, values, c_values, with_flags: bool) -> Sweep:
    w = fmt.width
    sweep = Sweep("float", name,
                  f"mad.{type_name} in every rounding mode"
                  f"{', with .ftz and .sat' if with_flags else ''} (PTX ISA 9.7.3.6: a fused "
                  "multiply-add).",
                  [Operand("a", f"u{w}", values), Operand("b", f"u{w}", values),
                   Operand("c", f"u{w}", c_values)])
    variants = [(m, False, False) for m in MODES]
    if with_flags:
        variants += [("rn", True, False), ("rn", False, True), ("rz", True, True)]
    for mode, ftz, sat in variants:
        mods = f".{mode}" + (".ftz" if ftz else "") + (".sat" if sat else "")
        sweep.forms.append(Form(
            type_name, f"mad{mods}.{type_name} {{d}}, %a{w}, %b{w}, %c{w};",
            lambda th, mode=mode, ftz=ftz, sat=sat: _fma(
                _low(th.a, fmt), _low(th.b, fmt), _low(th.c, fmt), fmt, mode, ftz, sat)))
    return sweep


mad32 = _mad_sweep("gen_mad_f32", "f32", F32, _F32, _F32_C, True)
register(mad32.split("gen_mad_f32_directed", lambda f: f.code.startswith(("mad.rz.f32",
                                                                          "mad.rm.", "mad.rp.")),
                     "mad.f32 in the directed rounding modes .rz, .rm, .rp (PTX ISA 9.7.3.6)."))
mad32.forms.append(Form(
    "f32", "max.ftz.f32 {d}, %a32, %b32;",
    lambda th: fpops.max_(_low(th.a, F32), _low(th.b, F32), F32, ftz=True),
    note="max.ftz.f32 (PTX ISA 9.7.3.12)"))
register(mad32)

mad64 = _mad_sweep("gen_mad_f64", "f64", F64, _F64, _F64_C, False)
register(mad64.split("gen_mad_f64_directed", lambda f: not f.code.startswith("mad.rn."),
                     "mad.f64 in the directed rounding modes .rz, .rm, .rp (PTX ISA 9.7.3.6)."))
register(mad64)

f64_modes = Sweep("float", "gen_f64_modes",
                  "sub, div, sqrt and rcp .f64 in every rounding mode (PTX ISA 9.7.3.2, "
                  "9.7.3.8, 9.7.3.15, 9.7.3.13).",
                  [Operand("a", "u64", _F64), Operand("b", "u64", _F64)])
_ONE = round_to(1, F64)
for _mode in MODES:
    f64_modes.forms.append(Form("f64", f"sub.{_mode}.f64 {{d}}, %a64, %b64;",
                                lambda th, m=_mode: fpops.sub(th.a, th.b, F64, m)))
    f64_modes.forms.append(Form("f64", f"div.{_mode}.f64 {{d}}, %a64, %b64;",
                                lambda th, m=_mode: fpops.div(th.a, th.b, F64, m)))
    f64_modes.forms.append(Form("f64", f"sqrt.{_mode}.f64 {{d}}, %a64;",
                                lambda th, m=_mode: fpops.sqrt(th.a, F64, m)))
    f64_modes.forms.append(Form("f64", f"rcp.{_mode}.f64 {{d}}, %a64;",
                                lambda th, m=_mode: fpops.div(_ONE, th.a, F64, m)))
register(f64_modes.split("gen_sub_f64_directed", lambda f: f.code.startswith(
    ("sub.rz", "sub.rm", "sub.rp")), "sub.f64 in the directed rounding modes .rz, .rm, .rp "
    "(PTX ISA 9.7.3.2)."))
register(f64_modes.split("gen_f64_directed", lambda f: ".rn." not in f.code,
                         "div, sqrt and rcp .f64 in the directed rounding modes .rz, .rm, .rp "
                         "(PTX ISA 9.7.3.8, 9.7.3.15, 9.7.3.13)."))
register(f64_modes)


