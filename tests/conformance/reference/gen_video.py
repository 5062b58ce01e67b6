"""Generated sweeps of the video instructions (PTX ISA 9.7.11 "Video Instructions"): the scalar
vadd, vsub, vabsdiff, vmin, vmax, vshl, vshr, vset and vmad with every combination of .dtype,
.atype and .btype, .sat and the secondary operations .add/.min/.max, and the SIMD forms
vadd2..vmax4, vavrg2/4, vset2/4 with .sat and the secondary accumulate, all on whole 32-bit
operands (no byte or half-word selectors; the SIMD forms' default selectors take a's lanes
and b's lanes in order, and the default mask keeps every lane of the result).

From 9.7.11.1 (scalar): the operands are sign- or zero-extended by their types, the primary
operation is exact, .sat clamps to the destination type's 32-bit range, and the secondary
operation combines the result with c, read with the destination's sign (vset: unsigned);
the final 32 bits are written. Without .sat, the secondary .min/.max of a primary result
outside the destination's 32-bit range is not compared, nor a saturated shift whose exact
result exceeds the ISA's .s34 intermediate (the ISA's .s34 intermediate and .s33 secondary
operands leave both open). vshl/vshr: b is unsigned; .clamp limits it to 32, .wrap
takes it modulo 32; vshr of a signed a is arithmetic. vmad (9.7.11.1 vmad): the product is
signed if either type is, plus c (sign-extended then) and 1 with .po, shifted right by 7 or
15 with .shr7/.shr15, clamped to the 32-bit range of the result's sign with .sat. From 9.7.11.2
(SIMD): each lane's result is clamped to the lane range of the destination type with .sat
(else truncated); .add adds every lane's result to c instead of merging.
"""

from __future__ import annotations

from tests.conformance.reference.bits import saturate, signed, unsigned
from tests.conformance.reference.sweep_values import hexes
from tests.conformance.sweep import Form, Operand, Sweep, register

TRIPLES = [(d, a, b) for d in ("u32", "s32") for a in ("u32", "s32") for b in ("u32", "s32")]
PAIRS = [(a, b) for a in ("u32", "s32") for b in ("u32", "s32")]

VALUES = hexes([0x00000000, 0x00000001, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x807F01FF,
                0x7FFF8001, 0x00FF0080])
SHIFTS = hexes([0, 1, 7, 31, 32, 33, 0xFFFFFFFF, 0x80000005])
C_VALUES = hexes([0x00000000, 0xC0FF7F01])


def value(x: int, type_name: str, bits: int = 32) -> int:
    x &= (1 << bits) - 1
    return signed(x, bits) if type_name == "s32" else x


def _in_range(v: int, dtype: str) -> bool:
    return (-(1 << 31) <= v < (1 << 31)) if dtype == "s32" else (0 <= v < (1 << 32))


def scalar(primary: int, dtype: str, sat: bool, op2: str | None, c: int,
           c_type: str | None = None) -> int | None:
    """optSaturate, then optSecondaryOp, then the low 32 bits (9.7.11.1). A saturated
    primary result the ISA's .s34 intermediate cannot hold (a shift left by 32) is open."""
    if sat and not -(1 << 33) <= primary < (1 << 33):
        return None
    tmp = saturate(primary, 32, dtype == "s32") if sat else primary
    if op2 is None:
        return unsigned(tmp, 32)
    cv = value(c, c_type or dtype)
    if op2 == "add":
        return unsigned(tmp + cv, 32)
    if not _in_range(tmp, dtype):
        return None
    return unsigned(min(tmp, cv) if op2 == "min" else max(tmp, cv), 32)


_PRIMARY = {"vadd": lambda x, y: x + y, "vsub": lambda x, y: x - y,
            "vabsdiff": lambda x, y: abs(x - y), "vmin": min, "vmax": max}


def _scalar_form(op: str, dtype: str, atype: str, btype: str, sat: bool, op2: str | None):
    mods = (".sat" if sat else "") + (f".{op2}" if op2 else "")
    operands = "%a32, %b32" + (", %c32" if op2 else "")
    code = f"{op}.{dtype}.{atype}.{btype}{mods} {{d}}, {operands};"
    return Form("u32", code, lambda th: scalar(
        _PRIMARY[op](value(th.a, atype), value(th.b, btype)), dtype, sat, op2, th.c))


_OPERANDS = [Operand("a", "u32", VALUES), Operand("b", "u32", VALUES),
             Operand("c", "u32", C_VALUES)]

scalar_sweep = Sweep("video", "gen_video_scalar",
                     "vadd, vsub, vabsdiff, vmin, vmax with every .dtype.atype.btype, .sat and "
                     "secondary .add/.min/.max (PTX ISA 9.7.11.1).", _OPERANDS)
for _op in _PRIMARY:
    for _d, _a, _b in TRIPLES:
        for _sat, _op2 in ((False, None), (True, None), (False, "add"), (False, "min"),
                           (True, "max")):
            scalar_sweep.forms.append(_scalar_form(_op, _d, _a, _b, _sat, _op2))
register(scalar_sweep)


def _compare(cmp: str, x: int, y: int) -> bool:
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
            "ge": x >= y}[cmp]


vset = Sweep("video", "gen_video_set",
             "vset with every .atype.btype and comparison, with and without the secondary "
             ".add/.min/.max (PTX ISA 9.7.11.1 vset: the result and c are unsigned), and vmad "
             "with every .dtype.atype.btype, .po, .sat, .shr7 and .shr15 (9.7.11.1 vmad).",
             _OPERANDS)
for _a, _b in PAIRS:
    for _cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
        vset.forms.append(Form(
            "u32", f"vset.{_a}.{_b}.{_cmp} {{d}}, %a32, %b32;",
            lambda th, a=_a, b=_b, cmp=_cmp: int(_compare(cmp, value(th.a, a), value(th.b, b)))))
    for _cmp, _op2 in (("lt", "add"), ("ge", "min"), ("ne", "max")):
        vset.forms.append(Form(
            "u32", f"vset.{_a}.{_b}.{_cmp}.{_op2} {{d}}, %a32, %b32, %c32;",
            lambda th, a=_a, b=_b, cmp=_cmp, op2=_op2: scalar(
                int(_compare(cmp, value(th.a, a), value(th.b, b))), "u32", False, op2, th.c,
                "u32")))


def vmad(a: int, b: int, c: int, atype: str, btype: str, po: bool, sat: bool,
         shift: int) -> int:
    """9.7.11.1 vmad without operand negation."""
    signed_final = "s32" in (atype, btype)
    tmp = value(a, atype) * value(b, btype)
    cc = signed(c, 32) if signed_final else unsigned(c, 32)
    tmp = tmp + cc + (1 if po else 0)
    result = unsigned(tmp >> shift, 64)
    if sat:
        as_value = signed(result, 64) if signed_final else result
        return unsigned(saturate(as_value, 32, signed_final), 32)
    return unsigned(result, 32)


for _d, _a, _b in TRIPLES:
    for _po, _sat, _scale in ((False, False, ""), (True, False, ""), (False, True, ""),
                              (False, False, "shr7"), (True, True, "shr15")):
        _mods = (".po" if _po else "") + (".sat" if _sat else "") + (f".{_scale}" if _scale else "")
        vset.forms.append(Form(
            "u32", f"vmad.{_d}.{_a}.{_b}{_mods} {{d}}, %a32, %b32, %c32;",
            lambda th, a=_a, b=_b, po=_po, sat=_sat, sh={"": 0, "shr7": 7, "shr15": 15}[_scale]:
            vmad(th.a, th.b, th.c, a, b, po, sat, sh)))
register(vset)

shift_sweep = Sweep("video", "gen_video_shift",
                    "vshl and vshr with every .dtype.atype, .clamp and .wrap, .sat and the "
                    "secondary .add/.min/.max (PTX ISA 9.7.11.1 vshl, vshr).",
                    [Operand("a", "u32", VALUES), Operand("b", "u32", SHIFTS),
                     Operand("c", "u32", C_VALUES)])


def _shift(a: int, n: int, atype: str, left: bool, mode: str) -> int:
    n = min(n, 32) if mode == "clamp" else n & 0x1F
    ta = value(a, atype)
    return ta << n if left else ta >> n


for _op in ("vshl", "vshr"):
    for _d in ("u32", "s32"):
        for _a in ("u32", "s32"):
            for _mode, _sat, _op2 in (("clamp", False, None), ("wrap", False, None),
                                      ("clamp", True, None), ("wrap", True, "add"),
                                      ("clamp", False, "min"), ("wrap", False, "max")):
                _mods = f".{_mode}" + (".sat" if _sat else "") + (f".{_op2}" if _op2 else "")
                _operands = "%a32, %b32" + (", %c32" if _op2 else "")
                shift_sweep.forms.append(Form(
                    "u32", f"{_op}.{_d}.{_a}.u32{_mods} {{d}}, {_operands};",
                    lambda th, op=_op, d=_d, a=_a, mode=_mode, sat=_sat, op2=_op2: scalar(
                        _shift(th.a, th.b, a, op == "vshl", mode), d, sat, op2, th.c)))
register(shift_sweep)

# -- SIMD -------------------------------------------------------------------------------


def lanes(x: int, count: int, type_name: str) -> list[int]:
    width = 32 // count
    return [value(x >> (width * k), type_name, width) for k in range(count)]


def _simd_primary(op: str, x: int, y: int) -> int:
    if op == "vavrg":
        total = x + y
        return (total + 1) >> 1 if total >= 0 else total >> 1
    return _PRIMARY[op](x, y)


def simd(op: str, count: int, dtype: str, atype: str, btype: str, sat: bool, add: bool,
         a: int, b: int, c: int) -> int:
    """9.7.11.2: per-lane results, clamped to the lane range of dtype with .sat; merged into
    d (all lanes, the default mask) or added to c with .add."""
    width = 32 // count
    results = []
    for x, y in zip(lanes(a, count, atype), lanes(b, count, btype), strict=True):
        t = _simd_primary(op, x, y) if op != "vset" else int(x < y)
        if sat:
            t = saturate(t, width, dtype == "s32")
        results.append(t)
    if add:
        return unsigned(c + sum(results), 32)
    return sum(unsigned(t, width) << (width * k) for k, t in enumerate(results))


for _count in (2, 4):
    _sweep = Sweep("video", f"gen_video_simd{_count}",
                   f"vadd{_count}, vsub{_count}, vavrg{_count}, vabsdiff{_count}, "
                   f"vmin{_count}, vmax{_count} with every .dtype.atype.btype, .sat and the "
                   f"secondary .add, and vset{_count} with every .atype.btype and comparison "
                   f"(PTX ISA 9.7.11.2).", _OPERANDS)
    for _op in ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax"):
        for _d, _a, _b in TRIPLES:
            for _sat, _add in ((False, False), (True, False), (False, True)):
                _mods = (".sat" if _sat else "") + (".add" if _add else "")
                _sweep.forms.append(Form(
                    "u32", f"{_op}{_count}.{_d}.{_a}.{_b}{_mods} {{d}}, %a32, %b32, %c32;",
                    lambda th, op=_op, n=_count, d=_d, a=_a, b=_b, sat=_sat, add=_add: simd(
                        op, n, d, a, b, sat, add, th.a, th.b, th.c)))
    for _a, _b in PAIRS:
        for _cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
            _sweep.forms.append(Form(
                "u32", f"vset{_count}.{_a}.{_b}.{_cmp} {{d}}, %a32, %b32, %c32;",
                lambda th, n=_count, a=_a, b=_b, cmp=_cmp: sum(
                    int(_compare(cmp, x, y)) << (32 // n * k) for k, (x, y) in enumerate(
                        zip(lanes(th.a, n, a), lanes(th.b, n, b), strict=True)))))
        _sweep.forms.append(Form(
            "u32", f"vset{_count}.{_a}.{_b}.lt.add {{d}}, %a32, %b32, %c32;",
            lambda th, n=_count, a=_a, b=_b: unsigned(th.c + sum(
                int(x < y) for x, y in zip(lanes(th.a, n, a), lanes(th.b, n, b), strict=True)),
                32)))
    register(_sweep)
