"""Floating-point instructions (PTX ISA 9.7.3, 9.7.4 half precision, 9.7.5 comparison).

f32 and f64 compute in numpy's IEEE arithmetic; f16 and bf16 compute in float32 and round
once to the 16-bit format; packed ``f16x2``/``bf16x2`` compute each half separately. See
:mod:`kernelcheck.emu.floats` for the rounding, flush-to-zero, saturation and NaN rules and
the accuracy of approximate instructions.
"""

from __future__ import annotations

import numpy as np

from kernelcheck.emu.compiler import OPS, instruction_type
from kernelcheck.emu.floats import flush, fmax, fmin, round_to, saturate
from kernelcheck.emu.values import NP_TYPE, bf16_to_f32, f32_to_bf16

__all__ = ["float_arith", "float_fma", "float_unary", "float_minmax"]

_ROUNDING = ("rn", "rz", "rm", "rp")
_F16 = np.float16
_F32 = np.float32
_F64 = np.float64


def _register(*names):
    def deco(factory):
        for name in names:
            OPS[name] = factory
        return factory
    return deco


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
    ftz = "ftz" in instr.modifiers and t in ("f32", "f16", "f16x2")
    sat = "sat" in instr.modifiers
    mode = _rounding(instr)

    def finish(r):
        if ftz:
            r = flush(r)
        if sat:
            r = saturate(r)
        if post is not None:
            r = post(r)
        return r

    if _packed(t):
        def run(st, fr, mask):
            halves = [_split(g(st, fr), t) for g in getters]
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
            return flush(dec(g(st, fr)))
    else:
        def read(g, st, fr):
            return dec(g(st, fr))

    def run(st, fr, mask):
        r = compute(*[read(g, st, fr) for g in getters])
        put(st, fr, enc(finish(r)), mask)
    return run


def _directed(op, mode, dtype):
    """An f32 binary op with a directed rounding mode, via exact float64."""
    def f(a, b):
        exact = op(np.asarray(a, dtype=_F64), np.asarray(b, dtype=_F64))
        return round_to(exact, dtype, mode)
    return f


def float_arith(instr, cx, t):
    """add/sub/mul/div of a float type."""
    op = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
          "div": np.divide}[instr.opcode]
    mode = _rounding(instr)
    if t == "f32" and mode != "rn":
        return _elementwise(instr, cx, t, 2, _directed(op, mode, _F32))
    return _elementwise(instr, cx, t, 2, op)


def float_fma(instr, cx, t):
    """fma/mad of a float type: one rounding for f32/f16 (computed exactly in float64)."""
    mode = _rounding(instr)
    if t == "f64":
        return _elementwise(instr, cx, t, 3, lambda a, b, c: a * b + c)
    dtype = _F16 if t in ("f16", "f16x2") else _F32

    def fma(a, b, c):
        exact = np.asarray(a, _F64) * np.asarray(b, _F64) + np.asarray(c, _F64)
        if t in ("f16", "f16x2", "bf16", "bf16x2"):
            return exact.astype(_F32) if mode == "rn" else round_to(exact, dtype, mode)
        return round_to(exact, dtype, mode)
    return _elementwise(instr, cx, t, 3, fma)


_register("fma")(lambda instr, cx: float_fma(instr, cx, instruction_type(instr)))


def float_unary(instr, cx, t):
    """abs/neg of a float type (sign bit operations, NaN payload kept)."""
    if instr.opcode == "neg":
        return _elementwise(instr, cx, t, 1, np.negative)
    return _elementwise(instr, cx, t, 1, np.abs)


def float_minmax(instr, cx, t):
    nan = "NaN" in instr.modifiers
    f = fmin if instr.opcode == "min" else fmax
    return _elementwise(instr, cx, t, 2, lambda a, b: f(a, b, nan))


# ------------------------------------------------------------------ approximate math
def _approx(fn64):
    def factory(instr, cx):
        t = instruction_type(instr)
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


_register("sqrt")(_approx(np.sqrt))
_register("rsqrt")(_approx(_rsqrt))
_register("rcp")(_approx(lambda x: 1.0 / x))
_register("ex2")(_approx(np.exp2))
_register("lg2")(_approx(np.log2))
_register("sin")(_approx(np.sin))
_register("cos")(_approx(np.cos))
_register("tanh")(_approx(np.tanh))


@_register("copysign")
def _copysign(instr, cx):
    t = instruction_type(instr)
    # copysign d, a, b: magnitude of b with the sign of a.
    return _elementwise(instr, cx, t, 2, lambda a, b: np.copysign(b, a))


@_register("testp")
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


def _compare_parts(instr, cx):
    t = instruction_type(instr)
    mods = [m for m in instr.modifiers if m not in ("ftz",)]
    op = mods[0]
    boolop = next((m for m in mods[1:] if m in ("and", "or", "xor")), None)
    return t, op, boolop


def _setp_like(instr, cx, out_t, convert):
    t, op, boolop = _compare_parts(instr, cx)
    is_f = t[0] == "f" or t.startswith("bf")
    a = cx.src(instr.operands[1], t)
    b = cx.src(instr.operands[2], t)
    c = cx.src(instr.operands[3], "pred") if boolop else None
    dest = instr.operands[0]
    second = None
    if type(dest).__name__ == "PredicatePair":
        second = cx.dst(dest.second, out_t)
    put = cx.dst(dest, out_t)
    dec = _decode(t) if not _packed(t) else None
    if _packed(t):
        raise cx.unsupported()
    ftz = "ftz" in instr.modifiers

    def run(st, fr, mask):
        x, y = a(st, fr), b(st, fr)
        if dec is not None:
            x, y = dec(x), dec(y)
        if ftz:
            x, y = flush(x), flush(y)
        r = _compare(op, np.asarray(x), np.asarray(y), is_f)
        nr = ~r
        if c is not None:
            q = c(st, fr)
            f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[boolop]
            r, nr = f(r, q), f(nr, q)
        put(st, fr, convert(r), mask)
        if second is not None:
            second(st, fr, convert(nr), mask)
    return run


@_register("setp")
def _setp(instr, cx):
    return _setp_like(instr, cx, "pred", lambda r: r)


@_register("set")
def _set(instr, cx):
    out_t = next(m for m in instr.modifiers if m in NP_TYPE)
    if out_t == "f32":
        return _setp_like(instr, cx, "f32", lambda r: np.where(r, _F32(1.0), _F32(0.0)))
    dt = NP_TYPE[out_t]
    return _setp_like(instr, cx, out_t, lambda r: np.where(r, dt.type(-1) if dt.kind == "i"
                                                           else np.iinfo(dt).max, dt.type(0)))
