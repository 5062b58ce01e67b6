"""Generated sweeps of the comparison and selection instructions (PTX ISA 9.7.4 "Comparison and
Selection Instructions": 9.7.4.1 set, 9.7.4.2 setp, 9.7.4.3 selp, 9.7.4.4 slct; 9.7.4.5-6 the
half-precision set and setp), every type with every operator, Boolean operator and ``.ftz``.

Rules used, from those sections: ``t = a CmpOp b``; ``p = BoolOp(t, c)``, ``q = BoolOp(!t, c)``
(for .f16x2/.bf16x2, ``p`` and ``q`` are the lower and upper halves' results, each combined
with ``c``); set writes 0xffffffff (0xffff for 16-bit destinations and per half of a packed
source) or 1.0 of the destination's float type when the result is true, else 0. The bit-size
types take only eq and ne, the signed types eq..ge, the unsigned types eq..ge and lo..hs (the
integer-comparison table of 9.7.4.2). ``.ftz`` flushes subnormal inputs to zero of the same
sign before comparing; it applies to .f32, .f16 and .f16x2. slct: ``d = c >= 0 ? a : b`` with
c an .s32 or an .f32 (NaN compares false, -0.0 >= 0 is true; ``.ftz`` flushes c).
"""

from __future__ import annotations

import re
from functools import cache

from tests.conformance.reference.bits import signed, unsigned
from tests.conformance.reference.compare import float_compare
from tests.conformance.reference.fpops import compare as _compare
from tests.conformance.reference.fpops import decode, sign_of
from tests.conformance.reference.ieee import BF16, F16, F32, F64, NAN
from tests.conformance.reference.sweep_values import (
    BF16_VALUES,
    F16_VALUES,
    F32_VALUES,
    F64_VALUES,
    INT_VALUES,
    half_pairs,
)
from tests.conformance.sweep import Form, Operand, Sweep, register

INT_TYPES = ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64")
BOOL_OPS = ("and", "or", "xor")
FLOAT_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
             "num", "nan")
_ORDER = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
          "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y,
          "lo": lambda x, y: x < y, "ls": lambda x, y: x <= y, "hi": lambda x, y: x > y,
          "hs": lambda x, y: x >= y}


#: the IEEE order of two patterns (memoized: the sweeps compare the same few pairs many times)
fcompare = cache(_compare)


def int_ops(type_name: str) -> tuple[str, ...]:
    if type_name[0] == "b":
        return ("eq", "ne")
    if type_name[0] == "s":
        return ("eq", "ne", "lt", "le", "gt", "ge")
    return ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")


def width(type_name: str) -> int:
    """The width of one value of a type (.bf16x2 -> 16)."""
    return int(re.search(r"\d+", type_name).group())


def int_value(x: int, type_name: str) -> int:
    bits = int(type_name[1:])
    return signed(x, bits) if type_name[0] == "s" else unsigned(x, bits)


def boolean(op: str, t: bool, c: bool) -> bool:
    return {"and": t and c, "or": t or c, "xor": t != c}[op]


def _int_test(op: str, type_name: str):
    return lambda x, y: _ORDER[op](int_value(x, type_name), int_value(y, type_name))


def _float_test(op: str, fmt, ftz: bool = False):
    return lambda x, y: float_compare(op, fcompare(x, y, fmt, ftz=ftz))


def _pair_code(instruction: str) -> str:
    """An instruction writing %p1|%p2, then d = p | q << 1."""
    return (f"{instruction}\nselp.u16 %h1, 1, 0, %p1;\nselp.u16 %h2, 2, 0, %p2;\n"
            "or.b16 {d}, %h1, %h2;")


def _setp_forms(type_name: str, ops, test, regs: str, ftz: tuple[bool, ...] = (False,),
                pair: bool = True):
    """setp with every operator (and .ftz), then every BoolOp, with c and with !c (the
    scalar half types write only p with a BoolOp, 9.7.4.6)."""
    forms = []
    w = width(type_name)
    for flush in ftz:
        f = ".ftz" if flush else ""
        for op in ops:
            t = test(op, flush)
            forms.append(Form("pred", f"setp.{op}{f}.{type_name} {{d}}, %a{regs}, %b{regs};",
                              lambda th, t=t, w=w: t(_low(th.a, w), _low(th.b, w))))
    for k, bop in enumerate(BOOL_OPS):
        op = ops[(2 + k) % len(ops)]
        t = test(op, False)
        for negate in (False, True):
            c = "!%c_p" if negate else "%c_p"
            if pair:
                code = _pair_code(f"setp.{op}.{bop}.{type_name} %p1|%p2, %a{regs}, %b{regs}, "
                                  f"{c};")
            else:
                code = (f"setp.{op}.{bop}.{type_name} %p1, %a{regs}, %b{regs}, {c};\n"
                        "selp.u16 {d}, 1, 0, %p1;")

            def ref(th, t=t, bop=bop, negate=negate, w=w, pair=pair):
                truth = t(_low(th.a, w), _low(th.b, w))
                c = bool(th.c & 1) != negate
                return boolean(bop, truth, c) | (boolean(bop, not truth, c) << 1 if pair else 0)

            forms.append(Form("u8", code, ref))
    return forms


def _low(x: int, bits: int) -> int:
    return x & ((1 << bits) - 1)


def _set_forms(dtype: str, stype: str, ops, test, regs: str, kind: str, true: int,
               ftz_ops: tuple[str, ...] = ()):
    forms = []
    w = width(stype)
    for op in ops:
        t = test(op, False)
        forms.append(Form(kind, f"set.{op}.{dtype}.{stype} {{d}}, %a{regs}, %b{regs};",
                          lambda th, t=t, w=w: true if t(_low(th.a, w), _low(th.b, w)) else 0))
    for op in ftz_ops:
        t = test(op, True)
        forms.append(Form(kind, f"set.{op}.ftz.{dtype}.{stype} {{d}}, %a{regs}, %b{regs};",
                          lambda th, t=t, w=w: true if t(_low(th.a, w), _low(th.b, w)) else 0))
    for k, bop in enumerate(BOOL_OPS):
        op = ops[(1 + k) % len(ops)]
        t = test(op, False)
        c = "!%c_p" if k == 1 else "%c_p"

        def ref(th, t=t, bop=bop, negate=k == 1, w=w):
            truth = t(_low(th.a, w), _low(th.b, w))
            return true if boolean(bop, truth, bool(th.c & 1) != negate) else 0

        forms.append(Form(kind, f"set.{op}.{bop}.{dtype}.{stype} {{d}}, %a{regs}, %b{regs}, {c};",
                          ref))
    return forms


_ONE = {"f32": 0x3F800000, "u32": 0xFFFFFFFF, "s32": 0xFFFFFFFF}
_PRED = Operand("c", "u16", (0, 1))

# -- integers ---------------------------------------------------------------------------

_INTS = [Operand("a", "u64", INT_VALUES), Operand("b", "u64", INT_VALUES), _PRED]

setp_int = Sweep("compare", "gen_setp_int",
                 "setp on every integer type with every operator it takes, and every BoolOp "
                 "(PTX ISA 9.7.4.2).", _INTS)
for _t in INT_TYPES:
    setp_int.forms += _setp_forms(_t, int_ops(_t), lambda op, _f, _t=_t: _int_test(op, _t),
                                  str(width(_t)))
register(setp_int)

set_int = Sweep("compare", "gen_set_int",
                "set with every destination type on every integer source type, every operator "
                "and BoolOp (PTX ISA 9.7.4.1).", _INTS)
for _d in ("u32", "s32", "f32"):
    for _t in INT_TYPES:
        set_int.forms += _set_forms(_d, _t, int_ops(_t), lambda op, _f, _t=_t: _int_test(op, _t),
                                    str(width(_t)), "u32", _ONE[_d])
register(set_int)

# -- f32 and f64 ------------------------------------------------------------------------

_F32 = [Operand("a", "u32", F32_VALUES), Operand("b", "u32", F32_VALUES), _PRED]
cmp_f32 = Sweep("compare", "gen_cmp_f32",
                "setp and set on .f32 with every operator, .ftz and BoolOp (PTX ISA 9.7.4.1, "
                "9.7.4.2).", _F32)
cmp_f32.forms += _setp_forms("f32", FLOAT_OPS, lambda op, f: _float_test(op, F32, f), "32",
                             (False, True))
cmp_f32.forms.append(Form("u8", _pair_code("setp.ltu.and.ftz.f32 %p1|%p2, %a32, %b32, %c_p;"),
                          lambda th: _bool_pair("ltu", "and", th, F32, True, 32)))
for _d in ("u32", "s32", "f32"):
    cmp_f32.forms += _set_forms(_d, "f32", FLOAT_OPS, lambda op, f: _float_test(op, F32, f),
                                "32", "u32", _ONE[_d], ftz_ops=("lt", "equ", "ge"))
register(cmp_f32)

_F64 = [Operand("a", "u64", F64_VALUES), Operand("b", "u64", F64_VALUES), _PRED]
cmp_f64 = Sweep("compare", "gen_cmp_f64",
                "setp and set on .f64 with every operator and BoolOp (PTX ISA 9.7.4.1, "
                "9.7.4.2).", _F64)
cmp_f64.forms += _setp_forms("f64", FLOAT_OPS, lambda op, f: _float_test(op, F64, f), "64")
for _d in ("u32", "s32", "f32"):
    cmp_f64.forms += _set_forms(_d, "f64", FLOAT_OPS, lambda op, f: _float_test(op, F64, f),
                                "64", "u32", _ONE[_d])
register(cmp_f64)


def _bool_pair(op, bop, th, fmt, ftz, w):
    truth = float_compare(op, fcompare(_low(th.a, w), _low(th.b, w), fmt, ftz=ftz))
    c = bool(th.c & 1)
    return boolean(bop, truth, c) | boolean(bop, not truth, c) << 1


# -- f16 and bf16, scalar and packed ----------------------------------------------------


def _halves(x: int) -> tuple[int, int]:
    return x & 0xFFFF, x >> 16


def _half_sweep(name: str, type_name: str, fmt, values, one: int, ftz: bool) -> Sweep:
    x2 = f"{type_name}x2"
    pairs = half_pairs(values)
    sweep = Sweep("compare", name,
                  f"setp and set on .{type_name} and .{x2} with every operator"
                  f"{', .ftz' if ftz else ''} and BoolOp (PTX ISA 9.7.4.5, 9.7.4.6: the "
                  "half-precision set and setp). Each operand holds two values; the scalar "
                  "forms read its lower half.",
                  [Operand("a", "u32", pairs), Operand("b", "u32", pairs), _PRED])
    flushes = (False, True) if ftz else (False,)

    def test(op, flush):
        return _float_test(op, fmt, flush)

    sweep.forms += _setp_forms(type_name, FLOAT_OPS, test, "16", flushes, pair=False)

    def x2_test(op, flush):
        def both(x, y):
            (x0, x1), (y0, y1) = _halves(x), _halves(y)
            return (float_compare(op, fcompare(x0, y0, fmt, ftz=flush)),
                    float_compare(op, fcompare(x1, y1, fmt, ftz=flush)))
        return both

    for flush in flushes:
        f = ".ftz" if flush else ""
        for op in FLOAT_OPS:
            t = x2_test(op, flush)
            sweep.forms.append(Form(
                "u8", _pair_code(f"setp.{op}{f}.{x2} %p1|%p2, %a32, %b32;"),
                lambda th, t=t: t(th.a, th.b)[0] | t(th.a, th.b)[1] << 1))
    for bop in BOOL_OPS:
        t = x2_test("ltu", False)

        def ref(th, t=t, bop=bop):
            lo, hi = t(th.a, th.b)
            c = bool(th.c & 1)
            return boolean(bop, lo, c) | boolean(bop, hi, c) << 1

        sweep.forms.append(Form(
            "u8", _pair_code(f"setp.ltu.{bop}.{x2} %p1|%p2, %a32, %b32, %c_p;"), ref))
    ftz_ops = ("lt", "neu") if ftz else ()
    for dtype, kind, true in ((type_name, "u16", one), ("u16", "u16", 0xFFFF),
                              ("s16", "u16", 0xFFFF), ("u32", "u32", 0xFFFFFFFF),
                              ("s32", "u32", 0xFFFFFFFF)):
        sweep.forms += _set_forms(dtype, type_name, FLOAT_OPS, test, "16", kind, true, ftz_ops)
    for dtype, true in ((x2, one), ("u32", 0xFFFF), ("s32", 0xFFFF)):
        for op in FLOAT_OPS + tuple(f"{o}.ftz" for o in ftz_ops):
            base, _, f = op.partition(".")
            t = x2_test(base, bool(f))
            sweep.forms.append(Form(
                "u32", f"set.{op}.{dtype}.{x2} {{d}}, %a32, %b32;",
                lambda th, t=t, true=true: (true if t(th.a, th.b)[0] else 0)
                | (true if t(th.a, th.b)[1] else 0) << 16))
        for bop in BOOL_OPS:
            t = x2_test("le", False)

            def ref(th, t=t, bop=bop, true=true):
                lo, hi = t(th.a, th.b)
                c = bool(th.c & 1)
                return (true if boolean(bop, lo, c) else 0) | \
                    (true if boolean(bop, hi, c) else 0) << 16

            sweep.forms.append(Form(
                "u32", f"set.le.{bop}.{dtype}.{x2} {{d}}, %a32, %b32, %c_p;", ref))
    return sweep


register(_half_sweep("gen_cmp_f16", "f16", F16, F16_VALUES, 0x3C00, ftz=True))
register(_half_sweep("gen_cmp_bf16", "bf16", BF16, BF16_VALUES, 0x3F80, ftz=False))

# -- selp, slct, mov.pred ---------------------------------------------------------------

#: c operands of slct: each is read as an .s32 and as an .f32 (-0.0, NaN, subnormals, -1.0)
SLCT_C = ("0x0", "0x1", "0x80000000", "0x80000001", "0x7fc00000", "0xffc00000", "0xbf800000",
          "0x3f800000")


def _slct_s32(c: int) -> bool:
    return signed(c, 32) >= 0


def _slct_f32(c: int, ftz: bool) -> bool:
    v = decode(c, F32, ftz)
    return v is not NAN and (v == 0 or sign_of(v) == 0)


select = Sweep("compare", "gen_select",
               "slct on every destination type with an .s32 and an .f32 (with and without "
               ".ftz) selector, selp on .f64, mov.pred (PTX ISA 9.7.4.3, 9.7.4.4, 9.7.9.3).",
               [Operand("a", "u64", INT_VALUES[::2]), Operand("b", "u64", INT_VALUES[1::2]),
                Operand("c", "u32", SLCT_C)])
for _t in INT_TYPES + ("f32", "f64"):
    _w = width(_t)
    _reg = {16: "%h1", 32: "%r1", 64: "{d}"}[_w]
    _widen = "" if _w == 64 else f"\ncvt.u64.u{_w} {{d}}, {_reg};"
    select.forms.append(Form(
        "u64", f"slct.{_t}.s32 {_reg}, %a{_w}, %b{_w}, %c32;{_widen}",
        lambda th, w=_w: _low(th.a if _slct_s32(th.c) else th.b, w)))
    for _ftz in (False, True):
        select.forms.append(Form(
            "u64", f"slct{'.ftz' if _ftz else ''}.{_t}.f32 {_reg}, %a{_w}, %b{_w}, %c32;{_widen}",
            lambda th, w=_w, f=_ftz: _low(th.a if _slct_f32(th.c, f) else th.b, w)))
select.forms.append(Form("u64", "selp.f64 {d}, %a64, %b64, %c_p;",
                         lambda th: th.a if th.c & 1 else th.b))
select.forms.append(Form("pred", "mov.pred %p3, %c_p;\nmov.pred {d}, %p3;",
                         lambda th: th.c & 1))
register(select)
