"""Floating-point instructions (PTX ISA 9.7.3, 9.7.4 half precision, 9.7.5 comparison).

The IEEE operations (add, sub, mul, div, fma, mad, sqrt and rcp without ``.approx``, abs,
neg, min, max) are rounded once from the exact result in every type and rounding mode
(:mod:`kernelcheck.emu.fparith`); packed ``f16x2``/``bf16x2`` compute each half. The
approximate instructions (``.approx``: sqrt, rsqrt, rcp, ex2, lg2, sin, cos, tanh) are
computed in float64 and rounded once: more accurate than the few ulps the ISA allows, so
their last bits may differ from a GPU's. ``rcp.approx.ftz.f64`` and ``rsqrt.approx.ftz.f64``
read only the upper word of their operand and write a zero lower word (:func:`_upper_word`).
"""

from __future__ import annotations

import numpy as np

from kernelcheck.emu import fparith
from kernelcheck.emu.compiler import instruction_type
from kernelcheck.emu.dispatch import form, register
from kernelcheck.emu.floats import flush, round_to, saturate
from kernelcheck.emu.narrow import round_float, to_odd, two_sum
from kernelcheck.emu.values import NP_TYPE, bf16_to_f32, f32_to_bf16

__all__ = ["float_arith", "float_fma", "float_unary", "float_minmax"]

_ROUNDING = ("rn", "rz", "rm", "rp")
_RND = "rn rz rm rp"
_F16 = np.float16
_F32 = np.float32
_F64 = np.float64


def _rounding(instr) -> str:
    return next((m for m in instr.modifiers if m in _ROUNDING), "rn")


# A scalar float type's values go through (decode -> compute dtype) and (encode <- result).
def _decode(t):
    if t == "bf16":
        return bf16_to_f32
    if t == "f16":
        return lambda v: np.asarray(v).astype(_F32)
    return lambda v: v


def _encode(t, mode):
    if t == "bf16":
        if mode == "rn":
            return f32_to_bf16
        return lambda v: f32_to_bf16(v)  # directed modes on bf16: nearest (documented)
    if t == "f16":
        if mode == "rn":
            return lambda v: np.asarray(v).astype(_F16)
        return lambda v: round_to(np.asarray(v, dtype=_F64), _F16, mode)
    return lambda v: v


def _packed(t):
    return t in ("f16x2", "bf16x2")


def _split(v, t):
    v = np.asarray(v, dtype=np.uint32)
    lo = (v & np.uint32(0xFFFF)).astype(np.uint16)
    hi = (v >> np.uint32(16)).astype(np.uint16)
    if t == "f16x2":
        return lo.view(_F16).astype(_F32), hi.view(_F16).astype(_F32)
    return bf16_to_f32(lo), bf16_to_f32(hi)


def _join(lo, hi, t):
    if t == "f16x2":
        lo = np.asarray(lo).astype(_F16).view(np.uint16)
        hi = np.asarray(hi).astype(_F16).view(np.uint16)
    else:
        lo, hi = f32_to_bf16(lo), f32_to_bf16(hi)
    return (np.asarray(hi).astype(np.uint32) << np.uint32(16)) | np.asarray(lo).astype(
        np.uint32)


def _elementwise(instr, cx, t, nargs, compute, post=None):
    """Build ``fn`` applying ``compute(*float_args)`` with the type's decode/encode."""
    getters = [cx.src(o, t) for o in instr.operands[1:1 + nargs]]
    put = cx.dst(instr.operands[0], t)
    ftz = "ftz" in instr.modifiers and t in ("f32", "f16", "f16x2", "bf16", "bf16x2")
    brain = t in ("bf16", "bf16x2")
    sat = "sat" in instr.modifiers
    mode = _rounding(instr)
    # Half values are computed as float32: flush them at the half type's own threshold.
    if t in ("f16", "f16x2"):
        def flush_t(v):
            return fparith.flush_to_zero(v, "f16").astype(_F32)
    else:
        flush_t = flush

    def finish(r):
        if ftz and brain:
            # ex2.approx.ftz.bf16 "flushes subnormal inputs and results to sign-preserving
            # zero" (ISA 9.7.4.10): the result is the bf16 value, so round to bf16 first (a
            # float32 just below 2^-126 may round up to the smallest normal bf16) and flush
            # what is still subnormal; bf16 shares float32's exponent range.
            r = bf16_to_f32(f32_to_bf16(r))
        if ftz:
            r = flush_t(r)
        if sat:
            r = saturate(r)
        if post is not None:
            r = post(r)
        return r

    if _packed(t):
        def operands(st, fr):
            halves = [_split(g(st, fr), t) for g in getters]
            if ftz:
                halves = [(flush_t(lo), flush_t(hi)) for lo, hi in halves]
            return halves

        def run(st, fr, mask):
            halves = operands(st, fr)
            lo = finish(compute(*[h[0] for h in halves]))
            hi = finish(compute(*[h[1] for h in halves]))
            if t == "f16x2" and mode != "rn":
                lo = round_to(np.asarray(lo, _F64), _F16, mode).astype(_F32)
                hi = round_to(np.asarray(hi, _F64), _F16, mode).astype(_F32)
            put(st, fr, _join(lo, hi, t), mask)
        return run

    dec, enc = _decode(t), _encode(t, mode)
    if ftz:
        def read(g, st, fr):
            return flush_t(dec(g(st, fr)))
    else:
        def read(g, st, fr):
            return dec(g(st, fr))

    def run(st, fr, mask):
        r = compute(*[read(g, st, fr) for g in getters])
        put(st, fr, enc(finish(r)), mask)
    return run


_NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "sqrt": np.sqrt, "rcp": np.reciprocal}


def _exact(instr, cx, t, name, nargs):
    """An IEEE operation of :mod:`kernelcheck.emu.fparith`, rounded once per element."""
    u = fparith.ELEMENT[t]
    getters = [cx.src(o, t) for o in instr.operands[1:1 + nargs]]
    put = cx.dst(instr.operands[0], t)
    mods = instr.modifiers
    mode = _rounding(instr)
    ftz = "ftz" in mods and u in ("f32", "f16")
    sat = "sat" in mods
    relu = "relu" in mods
    if t in ("f32", "f64") and mode == "rn" and not (ftz or sat or relu) and name in _NUMPY:
        # numpy's float32/float64 operations are IEEE, rounded to nearest even: exact as is.
        ufunc = _NUMPY[name]
        canonical = np.uint32(0x7FFFFFFF).view(np.float32) if t == "f32" else None

        def run_ieee(st, fr, mask):
            with np.errstate(all="ignore"):
                r = ufunc(*[g(st, fr) for g in getters])
            if canonical is not None and np.isnan(r).any():
                r = np.where(np.isnan(r), canonical, r)
            put(st, fr, r, mask)
        return run_ieee

    if t == "f32" and name == "fma" and not (sat or relu):
        # The common fma.rn{.ftz}.f32: the product of two f32 is exact in float64, the sum
        # with c rounded to odd, then to f32 (one rounding in effect).
        canonical32 = np.uint32(0x7FFFFFFF).view(np.float32)

        def run_fma(st, fr, mask):
            x, y, z = (np.asarray(g(st, fr), dtype=_F64) for g in getters)
            if ftz:
                x, y, z = (fparith.flush_to_zero(v, "f32") for v in (x, y, z))
            with np.errstate(all="ignore"):
                s, e = two_sum(x * y, z)
            r = round_float(to_odd(s, e), _F32, mode)
            if mode == "rm":
                # IEEE 754 6.3: an exact zero sum is -0 under .rm, unless both summands
                # are +0.
                with np.errstate(all="ignore"):
                    p = x * y
                plus = (p == 0) & (z == 0) & ~np.signbit(p) & ~np.signbit(z)
                r = np.where((s == 0) & (e == 0) & ~plus, np.float32(-0.0), r)
            if ftz:
                r = flush(r)
            if np.isnan(r).any():
                r = np.where(np.isnan(r), canonical32, r)
            put(st, fr, r, mask)
        return run_fma

    def run(st, fr, mask):
        args = [fparith.decode(g(st, fr), t) for g in getters]
        out = []
        for parts in zip(*args, strict=True):
            if ftz:
                parts = [fparith.flush_to_zero(p, u) for p in parts]
            r = fparith.rounded(name, parts, u, mode)
            out.append(fparith.finish(r, u, ftz=ftz, sat=sat, relu=relu))
        put(st, fr, fparith.encode(out, t), mask)
    return run


def float_arith(instr, cx, t):
    """add/sub/mul/div of a float type; ``div.approx``/``div.full`` are computed as the IEEE
    quotient (more accurate than the approximation the ISA allows)."""
    return _exact(instr, cx, t, instr.opcode, 2)


def float_fma(instr, cx, t):
    """fma/mad of a float type: one rounding of ``a*b + c``."""
    return _exact(instr, cx, t, "fma", 3)


register("fma", form("f32", _RND + " ftz sat", required=[_RND]), form("f64", _RND, required=[_RND]),
         form("f16 f16x2", "rn ftz sat relu", required=["rn"]),
         form("bf16 bf16x2", "rn relu", required=["rn"]))(
    lambda instr, cx: float_fma(instr, cx, instruction_type(instr)))


def float_unary(instr, cx, t):
    """abs/neg of a float type: sign-bit operations, NaN payload kept (ISA 9.7.3.7-8)."""
    bits_t = {2: "b16", 4: "b32", 8: "b64"}[NP_TYPE[t].itemsize]
    get = cx.src(instr.operands[1], bits_t)
    put = cx.dst(instr.operands[0], bits_t)
    ftz = "ftz" in instr.modifiers and fparith.ELEMENT[t] in ("f32", "f16")
    op = instr.opcode
    return lambda st, fr, mask: put(st, fr, fparith.sign_op(get(st, fr), t, op, ftz), mask)


def float_minmax(instr, cx, t):
    """min/max of a float type (ISA 9.7.3.10-11, 9.7.4.9-10)."""
    u = fparith.ELEMENT[t]
    a = cx.src(instr.operands[1], t)
    b = cx.src(instr.operands[2], t)
    put = cx.dst(instr.operands[0], t)
    ftz = "ftz" in instr.modifiers and u in ("f32", "f16")
    nan_mode = "NaN" in instr.modifiers
    is_min = instr.opcode == "min"

    def run(st, fr, mask):
        out = []
        for x, y in zip(fparith.decode(a(st, fr), t), fparith.decode(b(st, fr), t),
                        strict=True):
            if ftz:
                x, y = fparith.flush_to_zero(x, u), fparith.flush_to_zero(y, u)
            r = fparith.minmax(x, y, is_min, nan_mode)
            out.append(fparith.flush_to_zero(r, u) if ftz else r)
        put(st, fr, fparith.encode(out, t), mask)
    return run


# ------------------------------------------------------------------ approximate math
def _approx(fn64, exact_name=None):
    def factory(instr, cx):
        t = instruction_type(instr)
        if exact_name is not None and "approx" not in instr.modifiers:
            return _exact(instr, cx, t, exact_name, 1)  # sqrt.rn / rcp.rn: IEEE, exact
        dtype = NP_TYPE.get(t, _F32)
        if t in ("bf16", "bf16x2", "f16", "f16x2"):
            dtype = _F32

        def compute(a):
            with np.errstate(all="ignore"):
                return fn64(np.asarray(a, dtype=_F64)).astype(dtype)
        return _elementwise(instr, cx, t, 1, compute)
    return factory


def _rsqrt(x):
    return 1.0 / np.sqrt(x)


#: The upper word of an f64 (1.11.20 format) and the canonical NaN of the upper-word forms.
_UPPER = np.uint64(0xFFFFFFFF00000000)
_UPPER_NAN = np.uint64(0x7FFFFFFF00000000)
_EXPONENT64 = np.uint64(0x7FF0000000000000)


def _flush64(bits):
    """f64 bit patterns with subnormal values turned into zero of their sign."""
    sub = ((bits & _EXPONENT64) == 0) & ((bits & ~np.uint64(1 << 63)) != 0)
    return np.where(sub, bits & np.uint64(1 << 63), bits)


def _upper_word(fn64):
    """``rcp.approx.ftz.f64`` (ISA 9.7.3.14) and ``rsqrt.approx.ftz.f64`` (9.7.3.17).

    Both read only the upper word of ``a`` and write only the upper word of ``d``:
    "tmp = a[63:32]; // upper word of a, 1.11.20 format", "d[63:32] = 1.0 / tmp;" (or
    ``1.0 / sqrt(tmp)``) and "d[31:0] = 0x00000000". "Subnormal inputs and results are
    flushed to sign-preserving zero" and "Input NaNs map to a canonical NaN with encoding
    0x7fffffff00000000" (every NaN result takes that encoding here). The ISA leaves how the
    1.11.20 result is rounded to the implementation ("a fast, gross approximation"): the
    emulator computes the function of ``tmp`` in float64 and rounds it to nearest even at
    the 20th mantissa bit.
    """
    def factory(instr, cx):
        get = cx.src(instr.operands[1], "b64")
        put = cx.dst(instr.operands[0], "b64")

        def run(st, fr, mask):
            bits = np.asarray(get(st, fr)).astype(np.uint64)
            x = np.ascontiguousarray(_flush64(bits & _UPPER)).view(np.float64)
            with np.errstate(all="ignore"):
                r = np.asarray(fn64(x), dtype=np.float64)
            rb = r.view(np.uint64)
            finite = np.isfinite(r)
            # Round to nearest even at bit 32 (a carry into the exponent is the right value,
            # up to infinity).
            half = np.uint64(0x7FFFFFFF) + ((rb >> np.uint64(32)) & np.uint64(1))
            rb = np.where(finite, (rb + half) & _UPPER, rb)
            rb = _flush64(rb)
            rb = np.where(np.isnan(r), _UPPER_NAN, rb)
            put(st, fr, rb.astype(np.uint64), mask)
        return run
    return factory


register("sqrt", form("f32", "approx ftz", required=["approx"]),
         form("f32", _RND + " ftz", required=[_RND]), form("f64", _RND, required=[_RND]))(
    _approx(np.sqrt, "sqrt"))
_rcp_upper = _upper_word(lambda x: 1.0 / x)
_rsqrt_upper = _upper_word(_rsqrt)
_rcp_approx = _approx(lambda x: 1.0 / x, "rcp")
_rsqrt_approx = _approx(_rsqrt)


def _f64_ftz(instr) -> bool:
    return "ftz" in instr.modifiers and instruction_type(instr) == "f64"


# rsqrt.approx.f64 (9.7.3.16) reads the whole operand; rsqrt.approx.ftz.f64 (9.7.3.17) and
# rcp.approx.ftz.f64 (9.7.3.14) only its upper word.
register("rsqrt", form("f32", "approx ftz", required=["approx"]),
         form("f64", "approx ftz", required=["approx"]))(
    lambda instr, cx: (_rsqrt_upper if _f64_ftz(instr) else _rsqrt_approx)(instr, cx))
register("rcp", form("f32", "approx ftz", required=["approx"]),
         form("f32", _RND + " ftz", required=[_RND]), form("f64", _RND, required=[_RND]),
         form("f64", "approx ftz", required=["approx", "ftz"]))(
    lambda instr, cx: (_rcp_upper if _f64_ftz(instr) else _rcp_approx)(instr, cx))
register("ex2", form("f32", "approx ftz", required=["approx"]),
         form("f16 f16x2", "approx", required=["approx"]),
         form("bf16 bf16x2", "approx ftz", required=["approx"]))(_approx(np.exp2))
register("lg2", form("f32", "approx ftz", required=["approx"]))(_approx(np.log2))
register("sin", form("f32", "approx ftz", required=["approx"]))(_approx(np.sin))
register("cos", form("f32", "approx ftz", required=["approx"]))(_approx(np.cos))
register("tanh", form("f32 f16 f16x2 bf16 bf16x2", "approx", required=["approx"]))(
    _approx(np.tanh))


@register("copysign", form("f32 f64"))
def _copysign(instr, cx):
    t = instruction_type(instr)
    # copysign d, a, b: magnitude of b with the sign of a.
    return _elementwise(instr, cx, t, 2, lambda a, b: np.copysign(b, a))


@register("testp", form("f32 f64", "finite infinite number notanumber normal subnormal",
                           required=["finite infinite number notanumber normal subnormal"]))
def _testp(instr, cx):
    t = instruction_type(instr)
    kind = next(m for m in instr.modifiers if m in ("finite", "infinite", "number", "notanumber",
                                                     "normal", "subnormal"))
    a = cx.src(instr.operands[1], t)
    put = cx.dst(instr.operands[0], "pred")
    tiny = np.finfo(NP_TYPE[t]).tiny

    def run(st, fr, mask):
        x = np.asarray(a(st, fr))
        r = {"finite": lambda: np.isfinite(x), "infinite": lambda: np.isinf(x),
             "number": lambda: ~np.isnan(x), "notanumber": lambda: np.isnan(x),
             "normal": lambda: np.isfinite(x) & (np.abs(x) >= tiny),
             "subnormal": lambda: (np.abs(x) < tiny) & (x != 0)}[kind]()
        put(st, fr, r, mask)
    return run


# ------------------------------------------------------------------ comparisons
_CMP = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "lo": lambda a, b: a < b, "ls": lambda a, b: a <= b, "hi": lambda a, b: a > b,
    "hs": lambda a, b: a >= b,
}
#: Comparison operators of integer (bit) and float operands (ISA 9.7.5.1 setp, Table
#: "Operators for Signed/Unsigned/Bit-Size Types" and "Floating-Point Comparison Operators").
INT_CMP = "eq ne lt le gt ge lo ls hi hs"
FLOAT_CMP = "eq ne lt le gt ge equ neu ltu leu gtu geu num nan"
_BOOL = "and or xor"
_INTS = "b16 b32 b64 u16 u32 u64 s16 s32 s64"


def _compare(op: str, a, b, is_float: bool):
    if op in ("num", "nan"):
        either = np.isnan(a) | np.isnan(b)
        return ~either if op == "num" else either
    if op.endswith("u") and op[:-1] in _CMP and is_float:
        return _CMP[op[:-1]](a, b) | np.isnan(a) | np.isnan(b)
    r = _CMP[op](a, b)
    if is_float and op == "ne":
        r = r & ~(np.isnan(a) | np.isnan(b))  # ordered not-equal is false on NaN
    return r


def _compare_parts(instr):
    t = instruction_type(instr)
    op = next(m for m in instr.modifiers if m in _CMP or m in FLOAT_CMP.split())
    boolop = next((m for m in instr.modifiers if m in ("and", "or", "xor")), None)
    return t, op, boolop


def _halves(t):
    """Decoder of a compared operand into its halves (one part for scalar types)."""
    if t in fparith.ELEMENT:
        return lambda v: fparith.decode(v, t)
    return lambda v: (np.asarray(v),)


def _comparison(instr, cx):
    """``fn(st, fr) -> [result per half]`` of the comparison and its boolean combination."""
    t, op, boolop = _compare_parts(instr)
    is_f = t[0] == "f" or t.startswith("bf")
    a = cx.src(instr.operands[1], t)
    b = cx.src(instr.operands[2], t)
    c = cx.src(instr.operands[3], "pred") if boolop else None
    dec = _halves(t)
    u = fparith.ELEMENT.get(t, "f32")
    ftz = "ftz" in instr.modifiers
    combine = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(boolop)

    def compute(st, fr):
        out = []
        for x, y in zip(dec(a(st, fr)), dec(b(st, fr)), strict=True):
            if ftz:
                x, y = fparith.flush_to_zero(x, u), fparith.flush_to_zero(y, u)
            r = _compare(op, np.asarray(x), np.asarray(y), is_f)
            out.append((r, ~r))
        if combine is not None:
            q = c(st, fr)
            out = [(combine(r, q), combine(nr, q)) for r, nr in out]
        return out
    return compute


@register("setp", form(_INTS, INT_CMP + " " + _BOOL, required=[INT_CMP]),
          form("f32", FLOAT_CMP + " ftz " + _BOOL, required=[FLOAT_CMP]),
          form("f64 bf16 bf16x2", FLOAT_CMP + " " + _BOOL, required=[FLOAT_CMP]),
          form("f16 f16x2", FLOAT_CMP + " ftz " + _BOOL, required=[FLOAT_CMP]))
def _setp(instr, cx):
    """setp (ISA 9.7.5.1) and the half forms (9.7.5.4): ``p|q`` gets the comparison and its
    complement, each combined with ``c``; for ``.f16x2``/``.bf16x2`` ``p`` is the result of
    the lower halves and ``q`` of the upper halves."""
    compute = _comparison(instr, cx)
    dest = instr.operands[0]
    pair = type(dest).__name__ == "PredicatePair"
    put = cx.dst(dest, "pred")
    second = cx.dst(dest.second, "pred") if pair else None
    packed = _packed(instruction_type(instr))

    def run(st, fr, mask):
        parts = compute(st, fr)
        if packed:
            put(st, fr, parts[0][0], mask)
            if second is not None:
                second(st, fr, parts[1][0], mask)
            return
        r, nr = parts[0]
        put(st, fr, r, mask)
        if second is not None:
            second(st, fr, nr, mask)
    return run


# set (ISA 9.7.5.2): dtype.stype; the half forms (9.7.5.3) write 1.0 of the half type or
# all ones of the integer type per half.
_SET_TYPES = [f"{d}.{s}" for d in ("u32", "s32", "f32") for s in _INTS.split()]
_SET_FLOAT = [f"{d}.{s}" for d in ("u32", "s32", "f32") for s in ("f32", "f64")]
_SET_HALF = ([f"{d}.f16" for d in ("f16", "u16", "s16", "u32", "s32")]
             + [f"{d}.bf16" for d in ("bf16", "u16", "s16", "u32", "s32")]
             + [f"{d}.f16x2" for d in ("f16x2", "u32", "s32")]
             + [f"{d}.bf16x2" for d in ("bf16x2", "u32", "s32")])
_ONE = {"f16": 0x3C00, "bf16": 0x3F80, "f16x2": 0x3C00, "bf16x2": 0x3F80}


@register("set", form(_SET_TYPES, INT_CMP + " " + _BOOL, required=[INT_CMP]),
          form(_SET_FLOAT, FLOAT_CMP + " ftz " + _BOOL, required=[FLOAT_CMP]),
          form(_SET_HALF, FLOAT_CMP + " ftz " + _BOOL, required=[FLOAT_CMP]))
def _set(instr, cx):
    types = [m for m in instr.modifiers if m in NP_TYPE]
    out_t = types[0]
    compute = _comparison(instr, cx)
    if out_t == "f32":
        put = cx.dst(instr.operands[0], "f32")
        return lambda st, fr, mask: put(st, fr, np.where(compute(st, fr)[0][0], _F32(1.0),
                                                         _F32(0.0)), mask)
    if _packed(types[1]):
        # Each half of d: 1.0 of the half type (dtype f16x2/bf16x2) or 0xffff (u32/s32).
        one = _ONE.get(out_t, 0xFFFF)
        put = cx.dst(instr.operands[0], "b32")

        def run_packed(st, fr, mask):
            (lo, _), (hi, _) = compute(st, fr)
            r = (np.where(hi, np.uint32(one), np.uint32(0)) << np.uint32(16)) | np.where(
                lo, np.uint32(one), np.uint32(0))
            put(st, fr, r.astype(np.uint32), mask)
        return run_packed
    width = NP_TYPE[out_t].itemsize * 8
    one = _ONE.get(out_t, (1 << width) - 1)
    bits_t = {2: "b16", 4: "b32"}[NP_TYPE[out_t].itemsize]
    put = cx.dst(instr.operands[0], bits_t)
    dt = NP_TYPE[bits_t]
    return lambda st, fr, mask: put(st, fr, np.where(compute(st, fr)[0][0], dt.type(one),
                                                     dt.type(0)), mask)
