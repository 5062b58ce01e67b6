"""References of the comparison and selection cases (PTX ISA 9.7.4 "Comparison and Selection
Instructions", 9.7.4.1-9.7.4.4, and the half-precision forms of set and setp)."""

from __future__ import annotations

from tests.conformance.reference.bits import array, pyints, signed, unsigned
from tests.conformance.reference.fpops import compare as fcompare
from tests.conformance.reference.fpops import decode, sign_of
from tests.conformance.reference.ieee import BF16, F16, F32, F64, NAN, round_to
from tests.conformance.reference.registry import Inputs, reference

_INTEGER = {
    "eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
    "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y,
    "lo": lambda x, y: x < y, "ls": lambda x, y: x <= y, "hi": lambda x, y: x > y,
    "hs": lambda x, y: x >= y,
}


def float_compare(op: str, order: str | None) -> bool:
    """A PTX floating-point CmpOp given the IEEE order of the operands (None: unordered).

    The ordered operators are false on unordered operands; equ..geu are true; num is true
    when both are numbers and nan when either is NaN (PTX ISA 9.7.4.2, table "Floating-Point
    Comparison Operators")."""
    if op == "num":
        return order is not None
    if op == "nan":
        return order is None
    if op.endswith("u") and op != "equ" or op == "equ":
        if order is None:
            return True
        op = op[:-1]
    if order is None:
        return False
    return {"eq": order == "eq", "ne": order != "eq", "lt": order == "lt",
            "le": order in ("lt", "eq"), "gt": order == "gt", "ge": order in ("gt", "eq")}[op]


@reference("compare/setp_int")
def setp_int(inputs: Inputs) -> dict:
    xs, ys = (pyints(v) for v in inputs.cross("a", "b"))
    out = []
    for x, y in zip(xs, ys, strict=True):
        checks = []
        checks += [_INTEGER[c](x, y) for c in ("eq", "ne", "lt", "le", "gt", "ge")]
        ux, uy = unsigned(x, 32), unsigned(y, 32)
        checks += [_INTEGER[c](ux, uy) for c in ("lo", "ls", "hi", "hs")]
        wx, wy = signed(x << 16, 64), signed(y << 16, 64)
        checks += [_INTEGER[c](wx, wy) for c in ("eq", "ne", "lt", "le", "gt", "ge")]
        hx, hy = unsigned(x, 16), unsigned(y, 16)
        checks += [_INTEGER[c](hx, hy) for c in ("lo", "ls", "hi", "hs")]
        out.append(sum(1 << k for k, c in enumerate(checks) if c))
    return {"o_bits": array(out, "<u4")}


_FLOAT_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
              "num", "nan")


@reference("compare/setp_float")
def setp_float(inputs: Inputs) -> dict:
    xs, ys = (pyints(v.view("<u4")) for v in inputs.cross("a", "b"))
    out = []
    for x, y in zip(xs, ys, strict=True):
        order = fcompare(x, y, F32)
        checks = [float_compare(op, order) for op in _FLOAT_OPS]
        # widening to f64 is exact, so the f64 comparisons agree with the f32 ones
        wide = fcompare(round_to(decode(x, F32), F64), round_to(decode(y, F32), F64), F64)
        checks += [float_compare(op, wide) for op in _FLOAT_OPS]
        flushed = fcompare(x, y, F32, ftz=True)
        checks += [float_compare(op, flushed) for op in ("eq", "lt", "gtu", "nan")]
        out.append(sum(1 << k for k, c in enumerate(checks) if c))
    return {"o_bits": array(out, "<u4")}


@reference("compare/setp_bool")
def setp_bool(inputs: Inputs) -> dict:
    # p = (a CmpOp b) BoolOp c and q = !(a CmpOp b) BoolOp c (PTX ISA 9.7.4.2)
    xs, ys, zs = (pyints(v) for v in inputs.cross("a", "b", "c"))
    out = []
    for x, y, z in zip(xs, ys, zs, strict=True):
        t, c = x < y, z != 0
        bits = [t and c, (not t) and c, t or c, (not t) or c, t != c, (not t) != c,
                t and not c]
        out.append(sum(1 << k for k, b in enumerate(bits) if b))
    return {"o_bits": array(out, "<u4")}


@reference("compare/select")
def select(inputs: Inputs) -> dict:
    xs, ys = (pyints(v.view("<u4")) for v in inputs.cross("a", "b"))
    keys = ("o_selp", "o_selp_f", "o_selp64", "o_set_u", "o_set_s", "o_set_f", "o_set_and",
            "o_set_i", "o_slct_s", "o_slct_f", "o_setp_neg")
    out = {k: [] for k in keys}
    one = round_to(decode(0x3F800000, F32), F32)
    for x, y in zip(xs, ys, strict=True):
        order = fcompare(x, y, F32)
        p = float_compare("ltu", order)
        out["o_selp"].append(x if p else y)
        out["o_selp_f"].append(x if p else y)
        out["o_selp64"].append(((y << 32) | x) if p else ((x << 32) | y))
        out["o_set_u"].append(0xFFFFFFFF if float_compare("lt", order) else 0)
        out["o_set_s"].append(0xFFFFFFFF if float_compare("geu", order) else 0)
        out["o_set_f"].append(one if float_compare("le", order) else 0)
        x_is_number = decode(x, F32) is not NAN
        out["o_set_and"].append(0xFFFFFFFF if float_compare("gt", order) and x_is_number
                                else 0)
        out["o_set_i"].append(0xFFFFFFFF if signed(x, 32) > signed(y, 32) else 0)
        out["o_slct_s"].append(x if signed(y, 32) >= 0 else y)
        # slct with an f32 c: c >= 0 (a NaN c compares false; -0.0 >= 0 is true)
        c = decode(x, F32)
        out["o_slct_f"].append(x if (c is not NAN and (c == 0 or sign_of(c) == 0)) else y)
        out["o_setp_neg"].append(7 if p else 9)
    dtypes = dict.fromkeys(keys, "<u4") | {"o_selp64": "<u8"}
    return {k: array(v, dtypes[k]) for k, v in out.items()}


@reference("compare/half_x2")
def half_x2(inputs: Inputs) -> dict:
    # x = {hi: a, lo: b} and y = {hi: b, lo: a}; each half is compared on its own, the low
    # half giving p and the low 16 bits of d (PTX ISA 9.7.4.1, 9.7.4.2, half precision)
    a_s, b_s = (pyints(v) for v in inputs.cross("a", "b"))
    keys = ("o_setp", "o_set_u", "o_set_f", "o_setp_bf")
    out = {k: [] for k in keys}
    one = 0x3C00
    for a, b in zip(a_s, b_s, strict=True):
        lo = (b, a)  # (x.lo, y.lo)
        hi = (a, b)
        lt = [float_compare("lt", fcompare(*half, F16)) for half in (lo, hi)]
        gtu = [float_compare("gtu", fcompare(*half, F16)) for half in (lo, hi)]
        out["o_setp"].append(lt[0] | lt[1] << 1 | gtu[0] << 2 | gtu[1] << 3)
        out["o_set_u"].append((0xFFFF if lt[0] else 0) | (0xFFFF0000 if lt[1] else 0))
        leu = [float_compare("leu", fcompare(*half, F16)) for half in (lo, hi)]
        out["o_set_f"].append((one if leu[0] else 0) | ((one << 16) if leu[1] else 0))
        bf = [float_compare("lt", fcompare(*half, BF16)) for half in (lo, hi)]
        out["o_setp_bf"].append(bf[0] | bf[1] << 1)
    return {k: array(v, "<u4") for k, v in out.items()}


@reference("compare/half_scalar")
def half_scalar(inputs: Inputs) -> dict:
    a_s, b_s = (pyints(v) for v in inputs.cross("a", "b"))
    out = {"o_setp": [], "o_set_u": []}
    for a, b in zip(a_s, b_s, strict=True):
        h = fcompare(a, b, F16)
        bits = [float_compare("lt", h), float_compare("gtu", h), float_compare("nan", h),
                float_compare("lt", fcompare(a, b, BF16)),
                float_compare("equ", fcompare(a, b, BF16))]
        out["o_setp"].append(sum(1 << k for k, v in enumerate(bits) if v))
        out["o_set_u"].append(0xFFFFFFFF if float_compare("ne", h) else 0)
    return {k: array(v, "<u4") for k, v in out.items()}


@reference("compare/set_f16")
def set_f16(inputs: Inputs) -> dict:
    a_s, b_s = (pyints(v) for v in inputs.cross("a", "b"))
    values = [0x3C00 if float_compare("le", fcompare(a, b, F16)) else 0
              for a, b in zip(a_s, b_s, strict=True)]
    return {"o_set_f": array(values, "<u2")}


@reference("compare/half_ftz")
def half_ftz(inputs: Inputs) -> dict:
    a_s, b_s = (pyints(v) for v in inputs.cross("a", "b"))
    out = []
    for a, b in zip(a_s, b_s, strict=True):
        flushed = fcompare(a, b, F16, ftz=True)
        widened = fcompare(a, b, F16)  # the f32 values are normal: nothing to flush
        bits = [float_compare("lt", flushed), float_compare("eq", flushed),
                float_compare("lt", widened)]
        out.append(sum(1 << k for k, v in enumerate(bits) if v))
    return {"o_setp": array(out, "<u4")}


def _int_sweep(inputs: Inputs, bits: int) -> dict:
    """cases/compare/sweep_int<bits>.ptx: setp in the order the kernel writes it, selp, mov."""
    ops_signed = ("eq", "ne", "lt", "le", "gt", "ge")
    ops_unsigned = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs")
    xs, ys = (pyints(v) for v in inputs.cross("a", "b"))
    bits_out, selp, moved = [], [], []
    for x, y in zip(xs, ys, strict=True):
        checks = [_INTEGER[op](signed(x, bits), signed(y, bits)) for op in ops_signed]
        checks += [_INTEGER[op](x, y) for op in ops_unsigned]
        checks += [x == y, x != y]
        bits_out.append(sum(1 << k for k, c in enumerate(checks) if c))
        selp.append(x if x != 0 else y)
        moved.append(y)
    dtype = f"<u{bits // 8}"
    out = {"o_bits": array(bits_out, "<u4")}
    for kind in ("b", "u", "s"):
        out[f"o_selp_{kind}"] = array(selp, dtype)
        out[f"o_mov_{kind}"] = array(moved, dtype)
    return out


for _bits in (16, 32, 64):
    reference(f"compare/sweep_int{_bits}")(lambda inputs, _b=_bits: _int_sweep(inputs, _b))
