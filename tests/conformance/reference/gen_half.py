"""Generated sweeps of the half-precision instructions (PTX ISA 9.7.4 "Half Precision
Floating-Point Instructions"): add, sub, mul, fma, neg, abs, min and max on .f16, .f16x2,
.bf16 and .bf16x2 with every rounding, .ftz, .sat, .relu and .NaN modifier they take.

Rules used (9.7.4.1-9.7.4.8): results are rounded to nearest even, fma once; .ftz flushes
subnormal inputs and results of the .f16 types to zero of the same sign; .sat clamps to [0.0,
1.0] with NaN giving +0.0; .relu clamps negative results to +0 and makes NaN the canonical NaN;
min/max return the number when one operand is NaN, NaN when both are or, with .NaN, when
either is; the x2 forms apply the operation to the lower and upper halves independently.
NaN payloads (the ISA's "unspecified NaN"), the sign of a zero result under .sat/.relu and
the order of +0.0 and -0.0 in min/max are not compared.
"""

from __future__ import annotations

from functools import cache

from tests.conformance.reference import fpops
from tests.conformance.reference.ieee import BF16, F16, NAN, value_of
from tests.conformance.reference.sweep_values import BF16_VALUES, F16_VALUES, half_pairs, hexes
from tests.conformance.sweep import Form, Operand, Sweep, register


@cache
def _binary(op: str, a: int, b: int, fmt, ftz: bool, sat: bool) -> int:
    return {"add": fpops.add, "sub": fpops.sub, "mul": fpops.mul}[op](a, b, fmt, "rn", ftz, sat)


@cache
def _fma(a: int, b: int, c: int, fmt, ftz: bool, sat: bool, relu: bool) -> int | None:
    result = fpops.fma(a, b, c, fmt, "rn", ftz, sat and not relu)
    if sat and result == 0:
        return None if _raw_sign(a, b, c, fmt, ftz) else 0
    if relu:
        v = value_of(result, fmt)
        if v is NAN:
            return (1 << (fmt.width - 1)) - 1
        if result == 1 << (fmt.width - 1):
            return None
        return 0 if fpops.sign_of(v) else result
    return result


def _raw_sign(a: int, b: int, c: int, fmt, ftz: bool) -> int:
    """The sign of the unsaturated fma result (a -0.0 or a negative result saturates to +0.0,
    but the ISA leaves the sign of a zero result of .sat open)."""
    bits = fpops.fma(a, b, c, fmt, "rn", ftz)
    return bits == 1 << (fmt.width - 1)


def _unary(op: str, a: int, fmt, ftz: bool) -> int:
    x = fpops.flush(a, fmt) if ftz else a
    return fpops.absolute(x, fmt) if op == "abs" else fpops.negate(x, fmt)


def _minmax(op: str, a: int, b: int, fmt, ftz: bool, nan: bool) -> int | None:
    return (fpops.min_ if op == "min" else fpops.max_)(a, b, fmt, ftz=ftz, nan=nan)


def _halves(x: int) -> tuple[int, int]:
    return x & 0xFFFF, x >> 16


def _lanewise(function, *operands: int, x2: bool):
    """The result of a scalar form (lower halves) or, for x2, both lanes as a tuple."""
    lows = [x & 0xFFFF for x in operands]
    if not x2:
        return function(*lows)
    highs = [x >> 16 for x in operands]
    return (function(*lows), function(*highs))


def _sat_binary(op, a, b, fmt, ftz):
    """A .sat result; None for a zero whose sign the ISA leaves open."""
    result = _binary(op, a, b, fmt, ftz, True)
    if result == 0 and _binary(op, a, b, fmt, ftz, False) == 1 << (fmt.width - 1):
        return None
    return result


def _half_sweep(name: str, type_name: str, fmt, values, c_values) -> Sweep:
    x2 = f"{type_name}x2"
    is_f16 = type_name == "f16"
    pairs = half_pairs(values)
    sweep = Sweep("float", name,
                  f"add, sub, mul, fma, neg, abs, min and max on .{type_name} and .{x2} with "
                  "every modifier they take (PTX ISA 9.7.4.1-9.7.4.8). Operands hold two "
                  "values each; the scalar forms read the lower half.",
                  [Operand("a", "u32", pairs), Operand("b", "u32", pairs),
                   Operand("c", "u32", c_values)])
    flushes = (False, True) if is_f16 else (False,)
    for t, kind, regs in ((type_name, type_name, "16"), (x2, x2, "32")):
        packed = t == x2
        for op in ("add", "sub", "mul"):
            variants = [("", False, False), (".rn", False, False)]
            if is_f16:
                variants += [(".ftz", True, False), (".sat", False, True),
                             (".rn.ftz.sat", True, True)]
            for mods, ftz, sat in variants:
                def ref(th, op=op, ftz=ftz, sat=sat, packed=packed):
                    if sat:
                        return _lanewise(lambda a, b: _sat_binary(op, a, b, fmt, ftz),
                                         th.a, th.b, x2=packed)
                    return _lanewise(lambda a, b: _binary(op, a, b, fmt, ftz, False),
                                     th.a, th.b, x2=packed)

                sweep.forms.append(Form(kind, f"{op}{mods}.{t} {{d}}, %a{regs}, %b{regs};", ref))
        fma_variants = [("", False, False, False), (".relu", False, False, True)]
        if is_f16:
            fma_variants += [(".ftz", True, False, False), (".sat", False, True, False),
                             (".ftz.sat", True, True, False), (".ftz.relu", True, False, True)]
        for mods, ftz, sat, relu in fma_variants:
            sweep.forms.append(Form(
                kind, f"fma.rn{mods}.{t} {{d}}, %a{regs}, %b{regs}, %c{regs};",
                lambda th, ftz=ftz, sat=sat, relu=relu, packed=packed: _lanewise(
                    lambda a, b, c: _fma(a, b, c, fmt, ftz, sat, relu), th.a, th.b, th.c,
                    x2=packed)))
        for op in ("abs", "neg"):
            for ftz in flushes:
                sweep.forms.append(Form(
                    kind, f"{op}{'.ftz' if ftz else ''}.{t} {{d}}, %a{regs};",
                    lambda th, op=op, ftz=ftz, packed=packed: _lanewise(
                        lambda a: _unary(op, a, fmt, ftz), th.a, x2=packed)))
        for op in ("min", "max"):
            for ftz in flushes:
                for nan in (False, True):
                    mods = (".ftz" if ftz else "") + (".NaN" if nan else "")
                    sweep.forms.append(Form(
                        kind, f"{op}{mods}.{t} {{d}}, %a{regs}, %b{regs};",
                        lambda th, op=op, ftz=ftz, nan=nan, packed=packed: _lanewise(
                            lambda a, b: _minmax(op, a, b, fmt, ftz, nan), th.a, th.b,
                            x2=packed)))
    return sweep


_C_F16 = hexes([0x80000000, 0x3C00FC00, 0x7BFF0001])
_C_BF16 = hexes([0x80000000, 0x3F80FF80, 0x7F7F0001])
register(_half_sweep("gen_half_f16", "f16", F16, F16_VALUES, _C_F16))
register(_half_sweep("gen_half_bf16", "bf16", BF16, BF16_VALUES, _C_BF16))
