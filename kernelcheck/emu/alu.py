"""Integer and bit instructions (PTX ISA 9.7.1, 9.7.2, 9.7.7, 9.7.8), vectorized over lanes.

Every factory decodes the instruction once and returns ``fn(st, fr, mask)``. numpy integer
arithmetic on same-typed arrays wraps modulo 2**width, as PTX does. Division by zero (which
PTX leaves undefined) gives what NVIDIA hardware gives: an all-ones quotient and the dividend
as remainder; ``INT_MIN / -1`` gives ``INT_MIN`` with remainder 0.
"""

from __future__ import annotations

import numpy as np

from kernelcheck.emu.compiler import instruction_type
from kernelcheck.emu.dispatch import form, register
from kernelcheck.emu.values import NP_TYPE, SINT_OF_SIZE, UINT_OF_SIZE, is_float

__all__: list[str] = []

_U32 = np.uint32
_U64 = np.uint64
_ALL64 = np.uint64(0xFFFFFFFFFFFFFFFF)

# Type groups of the forms (PTX ISA 9.7.1 integer, 9.7.3 float, 9.7.4 half precision).
INT = "s16 s32 s64 u16 u32 u64"
WIDE = "s16 s32 u16 u32"
CARRY = "s32 s64 u32 u64"
BITS = "b16 b32 b64"
RND = "rn rz rm rp"
#: Float forms of add/sub/mul (ISA 9.7.3.1-3, 9.7.4.1-3).
FLOAT_ARITH = (form("f32", RND + " ftz sat"), form("f64", RND), form("f16 f16x2", "rn ftz sat"),
               form("bf16 bf16x2", "rn"))


def _itype(instr, cx):
    t = instruction_type(instr)
    if t is None:
        raise cx.unsupported()
    return t


def _signed(t):
    return SINT_OF_SIZE[NP_TYPE[t].itemsize]


def _unsigned(t):
    return UINT_OF_SIZE[NP_TYPE[t].itemsize]


def _binary(instr, cx, t, f, out_t=None):
    a = cx.src(instr.operands[1], t)
    b = cx.src(instr.operands[2], t)
    put = cx.dst(instr.operands[0], out_t or t)

    def run(st, fr, mask):
        put(st, fr, f(a(st, fr), b(st, fr)), mask)
    return run


def _unary(instr, cx, t, f, out_t=None):
    a = cx.src(instr.operands[1], t)
    put = cx.dst(instr.operands[0], out_t or t)

    def run(st, fr, mask):
        put(st, fr, f(a(st, fr)), mask)
    return run


# ------------------------------------------------------------------ add/sub/mul/mad
def _mul_hi(a, b, t):
    """High half of the full product of two same-typed integers."""
    size = NP_TYPE[t].itemsize
    if size < 8:
        wide = SINT_OF_SIZE[size * 2] if t[0] == "s" else UINT_OF_SIZE[size * 2]
        return ((a.astype(wide) * b.astype(wide)) >> (8 * size)).astype(NP_TYPE[t])
    ua = np.asarray(a).view(_U64) if np.ndim(a) else np.asarray(a).astype(_U64)
    ub = np.asarray(b).view(_U64) if np.ndim(b) else np.asarray(b).astype(_U64)
    hi = _umulhi64(ua, ub)
    if t[0] == "s":
        # signed high = unsigned high - (a<0 ? b : 0) - (b<0 ? a : 0)  (mod 2**64)
        hi = hi - np.where(np.asarray(a) < 0, ub, _U64(0)) - np.where(np.asarray(b) < 0, ua,
                                                                       _U64(0))
        return hi.view(np.int64) if np.ndim(hi) else hi.astype(np.int64)
    return hi


def _umulhi64(a, b):
    m = _U64(0xFFFFFFFF)
    s = _U64(32)
    a_lo, a_hi = a & m, a >> s
    b_lo, b_hi = b & m, b >> s
    lolo = a_lo * b_lo
    lohi = a_lo * b_hi
    hilo = a_hi * b_lo
    hihi = a_hi * b_hi
    cross = (lolo >> s) + (lohi & m) + (hilo & m)
    return hihi + (lohi >> s) + (hilo >> s) + (cross >> s)


def _wide(t):
    size = NP_TYPE[t].itemsize
    return ("s" if t[0] == "s" else "u") + str(16 * size)


@register("add", form(INT), form("s32", "sat"), form(CARRY, "cc", required=["cc"]),
          *FLOAT_ARITH)
@register("sub", form(INT), form("s32", "sat"), form(CARRY, "cc", required=["cc"]),
          *FLOAT_ARITH)
def _add_sub(instr, cx):
    t = _itype(instr, cx)
    if is_float(t):
        from kernelcheck.emu.fpu import float_arith
        return float_arith(instr, cx, t)
    mods = instr.modifiers
    sub = instr.opcode == "sub"
    if "sat" in mods:
        def f(a, b):
            r = a.astype(np.int64) - b if sub else np.asarray(a).astype(np.int64) + b
            return np.clip(r, -2**31, 2**31 - 1).astype(np.int32)
        return _binary(instr, cx, t, f)
    if "cc" in mods:
        return _carry(instr, cx, t, sub, carry_in=False, carry_out=True)
    return _binary(instr, cx, t, np.subtract if sub else np.add)


@register("addc", form(CARRY, "cc"))
@register("subc", form(CARRY, "cc"))
def _addc(instr, cx):
    t = _itype(instr, cx)
    return _carry(instr, cx, t, instr.opcode == "subc", True, "cc" in instr.modifiers)


def _add_carry(x, y, cin):
    """``x + y + cin`` in the unsigned type of ``x`` and the carry out of the sum."""
    s1 = x + y
    r = s1 + cin
    return r, (s1 < x) | (r < s1)


def _carry(instr, cx, t, sub, carry_in, carry_out):
    """add.cc/addc/sub.cc/subc (PTX ISA 9.7.2.1-2.4): the condition code CC.CF lives in
    register 0 per lane.

    The ISA writes subtraction in borrow terms (``subc``: ``d = a - (b + CC.CF)``, "borrow
    out written to CC.CF"), but CC.CF is one carry flag shared by the whole extended-precision
    family, and what a subtraction leaves in it is the carry of the two's-complement sum
    ``a + ~b + 1``: 1 when no borrow occurs (``a >= b`` unsigned), 0 on a borrow. ``subc``
    consumes it in the same sense, ``d = a + ~b + CC.CF`` = ``a - b - (1 - CC.CF)``; this is
    how NVIDIA hardware executes the chain (IADD3 with an inverted operand and carry), so a
    ``sub.cc``/``subc`` chain computes a multi-word difference, ``addc.u32 d, 0, 0`` after
    ``sub.cc`` reads 1 exactly when there was no borrow, and ``subc.u32 d, 0, 0`` reads 0 or
    -1 (the borrow mask).
    """
    ut = "u32" if NP_TYPE[t].itemsize == 4 else "u64"
    a = cx.src(instr.operands[1], ut)
    b = cx.src(instr.operands[2], ut)
    put = cx.dst(instr.operands[0], ut)
    udt = NP_TYPE[ut]

    def run(st, fr, mask):
        x = np.asarray(a(st, fr), dtype=udt)
        y = np.asarray(b(st, fr), dtype=udt)
        cin = fr.regs[0].astype(udt) if carry_in else udt.type(1 if sub else 0)
        r, cout = _add_carry(x, ~y if sub else y, cin)
        put(st, fr, r, mask)
        if carry_out:
            c = np.broadcast_to(cout, (st.L,)).astype(np.uint32)
            fr.regs[0] = c if mask is None else np.where(mask, c, fr.regs[0])
    return run


@register("mul", form(INT, "lo hi", required=["lo hi"]), form(WIDE, "wide", required=["wide"]),
          *FLOAT_ARITH)
def _mul(instr, cx):
    t = _itype(instr, cx)
    if is_float(t):
        from kernelcheck.emu.fpu import float_arith
        return float_arith(instr, cx, t)
    mods = instr.modifiers
    if "wide" in mods:
        wt = _wide(t)
        dt = NP_TYPE[wt]
        return _binary(instr, cx, t, lambda a, b: np.asarray(a).astype(dt) * np.asarray(b)
                       .astype(dt), wt)
    if "hi" in mods:
        return _binary(instr, cx, t, lambda a, b: _mul_hi(np.asarray(a), np.asarray(b), t))
    return _binary(instr, cx, t, np.multiply)


@register("mul24", form("s32 u32", "lo hi", required=["lo hi"]))
@register("mad24", form("s32 u32", "lo hi", required=["lo hi"]),
          form("s32", "hi sat", required=["hi", "sat"]))
def _mul24(instr, cx):
    """mul24/mad24 (PTX ISA 9.7.1.5-6): the 48-bit product of the low 24 bits of each
    operand; ``.lo`` keeps bits 0..31 and ``.hi`` bits 16..47. ``mad24.hi.sat.s32``: ".sat
    limits result of 32-bit signed addition to MININT..MAXINT (no overflow). Applies only to
    .s32 type in .hi mode": the sum of ``t<47..16>`` (as s32) and ``c`` is clamped."""
    t = _itype(instr, cx)
    hi = "hi" in instr.modifiers
    sat = "sat" in instr.modifiers
    s = t[0] == "s"

    def low24(v):
        v = np.asarray(v).astype(np.int64)
        v = v & 0xFFFFFF
        return np.where(v & 0x800000, v - 0x1000000, v) if s else v

    a = cx.src(instr.operands[1], t)
    b = cx.src(instr.operands[2], t)
    c = cx.src(instr.operands[3], t) if instr.opcode == "mad24" else None
    put = cx.dst(instr.operands[0], t)

    def run(st, fr, mask):
        product = low24(a(st, fr)) * low24(b(st, fr))
        r = ((product >> 16) if hi else product) & 0xFFFFFFFF
        r = r.astype(np.uint32).view(NP_TYPE[t])
        if sat:
            wide = r.astype(np.int64) + np.asarray(c(st, fr)).astype(np.int64)
            r = np.clip(wide, -2**31, 2**31 - 1).astype(np.int32)
        elif c is not None:
            r = r + c(st, fr)
        put(st, fr, r, mask)
    return run


@register("mad", form(INT, "lo hi", required=["lo hi"]), form(WIDE, "wide", required=["wide"]),
          form("s32", "hi sat", required=["hi", "sat"]),
          form(CARRY, "lo hi cc", required=["lo hi", "cc"]),
          form("f32", RND + " ftz sat", required=[RND]), form("f64", RND, required=[RND]))
def _mad(instr, cx):
    t = _itype(instr, cx)
    if is_float(t):
        from kernelcheck.emu.fpu import float_fma
        return float_fma(instr, cx, t)
    mods = instr.modifiers
    a = cx.src(instr.operands[1], t)
    b = cx.src(instr.operands[2], t)
    if "wide" in mods:
        wt = _wide(t)
        dt = NP_TYPE[wt]
        c = cx.src(instr.operands[3], wt)
        put = cx.dst(instr.operands[0], wt)

        def run(st, fr, mask):
            p = np.asarray(a(st, fr)).astype(dt) * np.asarray(b(st, fr)).astype(dt)
            put(st, fr, p + c(st, fr), mask)
        return run
    hi = "hi" in mods
    if "cc" in mods:
        return _mad_carry(instr, cx, t, carry_in=False)
    c = cx.src(instr.operands[3], t)
    put = cx.dst(instr.operands[0], t)
    if "sat" in mods:
        # mad.hi.sat.s32 (ISA 9.7.1.4): the high half plus c, clamped to [INT_MIN, INT_MAX]
        # instead of wrapping.
        def run_sat(st, fr, mask):
            x, y = np.asarray(a(st, fr)), np.asarray(b(st, fr))
            r = _mul_hi(x, y, t).astype(np.int64) + np.asarray(c(st, fr)).astype(np.int64)
            put(st, fr, np.clip(r, -2**31, 2**31 - 1).astype(np.int32), mask)
        return run_sat

    def run(st, fr, mask):
        x, y = np.asarray(a(st, fr)), np.asarray(b(st, fr))
        p = _mul_hi(x, y, t) if hi else x * y
        put(st, fr, p + c(st, fr), mask)
    return run


@register("madc", form(CARRY, "lo hi cc", required=["lo hi"]))
def _madc(instr, cx):
    return _mad_carry(instr, cx, _itype(instr, cx), carry_in=True)


def _mad_carry(instr, cx, t, carry_in):
    """mad{.lo,.hi}.cc and madc{.lo,.hi}{.cc} (PTX ISA 9.7.2.3-4): the low or high half of
    a*b, plus c, plus the carry flag for madc; ``.cc`` writes the carry out. The carry
    lives in register 0 per lane, as for add.cc."""
    ut = "u32" if NP_TYPE[t].itemsize == 4 else "u64"
    udt = NP_TYPE[ut]
    a = cx.src(instr.operands[1], t)
    b = cx.src(instr.operands[2], t)
    c = cx.src(instr.operands[3], ut)
    put = cx.dst(instr.operands[0], ut)
    hi = "hi" in instr.modifiers
    carry_out = "cc" in instr.modifiers

    def run(st, fr, mask):
        x = np.asarray(a(st, fr), dtype=NP_TYPE[t])
        y = np.asarray(b(st, fr), dtype=NP_TYPE[t])
        product = _mul_hi(x, y, t) if hi else x * y
        p = np.asarray(product, dtype=NP_TYPE[t]).view(udt)
        z = np.asarray(c(st, fr), dtype=udt)
        cin = fr.regs[0].astype(udt) if carry_in else udt.type(0)
        r, cout = _add_carry(p, z, cin)
        put(st, fr, r, mask)
        if carry_out:
            flag = np.broadcast_to(cout, (st.L,)).astype(np.uint32)
            fr.regs[0] = flag if mask is None else np.where(mask, flag, fr.regs[0])
    return run


@register("sad", form(INT))
def _sad(instr, cx):
    t = _itype(instr, cx)
    a, b, c = (cx.src(o, t) for o in instr.operands[1:4])
    put = cx.dst(instr.operands[0], t)

    def run(st, fr, mask):
        x, y = np.asarray(a(st, fr)), np.asarray(b(st, fr))
        d = np.where(x < y, y - x, x - y)
        put(st, fr, d.astype(NP_TYPE[t]) + c(st, fr), mask)
    return run


# ------------------------------------------------------------------ div/rem
def _div(a, b, t):
    a = np.asarray(a)
    b = np.asarray(b)
    dt = NP_TYPE[t]
    zero = b == 0
    safe = np.where(zero, 1, b).astype(dt)
    if t[0] == "s":
        info = np.iinfo(dt)
        ovf = (a == info.min) & (safe == -1)
        safe = np.where(ovf, 1, safe).astype(dt)
        q = _trunc_div(a, safe)
        q = np.where(ovf, a, q)
        return np.where(zero, dt.type(-1), q).astype(dt)
    q = a // safe
    return np.where(zero, np.iinfo(dt).max, q).astype(dt)


def _trunc_div(a, b):
    """Signed division rounding toward zero (C semantics)."""
    q = np.floor_divide(a, b)
    r = a - q * b
    adjust = (r != 0) & ((a < 0) != (b < 0))
    return q + adjust.astype(q.dtype)


def _rem(a, b, t):
    a = np.asarray(a)
    b = np.asarray(b)
    dt = NP_TYPE[t]
    zero = b == 0
    safe = np.where(zero, 1, b).astype(dt)
    if t[0] == "s":
        info = np.iinfo(dt)
        ovf = (a == info.min) & (safe == -1)
        safe = np.where(ovf, 1, safe).astype(dt)
        r = a - _trunc_div(a, safe) * safe
        r = np.where(ovf, 0, r)
    else:
        r = a % safe
    return np.where(zero, a, r).astype(dt)


@register("div", form(INT), form("f32", "approx full ftz"), form("f32", RND + " ftz",
                                                                required=[RND]),
          form("f64", RND, required=[RND]))
def _div_op(instr, cx):
    t = _itype(instr, cx)
    if is_float(t):
        from kernelcheck.emu.fpu import float_arith
        return float_arith(instr, cx, t)
    return _binary(instr, cx, t, lambda a, b: _div(a, b, t))


@register("rem", form(INT))
def _rem_op(instr, cx):
    t = _itype(instr, cx)
    return _binary(instr, cx, t, lambda a, b: _rem(a, b, t))


# ------------------------------------------------------------------ abs/neg/min/max
@register("abs", form("s16 s32 s64"), form("f32 f16 f16x2", "ftz"), form("f64 bf16 bf16x2"))
@register("neg", form("s16 s32 s64"), form("f32 f16 f16x2", "ftz"), form("f64 bf16 bf16x2"))
def _abs_neg(instr, cx):
    t = _itype(instr, cx)
    if is_float(t):
        from kernelcheck.emu.fpu import float_unary
        return float_unary(instr, cx, t)
    if instr.opcode == "neg":
        return _unary(instr, cx, t, lambda a: (np.zeros((), NP_TYPE[t]) - a))
    return _unary(instr, cx, t, lambda a: np.where(np.asarray(a) < 0, -np.asarray(a),
                                                   a).astype(NP_TYPE[t]))


@register("min", form(INT), form("s32", "relu"), form("f32", "ftz NaN"), form("f64"),
          form("f16 f16x2", "ftz NaN"), form("bf16 bf16x2", "NaN"))
@register("max", form(INT), form("s32", "relu"), form("f32", "ftz NaN"), form("f64"),
          form("f16 f16x2", "ftz NaN"), form("bf16 bf16x2", "NaN"))
def _min_max(instr, cx):
    t = _itype(instr, cx)
    if len(instr.operands) != 3:
        # min/max of three inputs (PTX ISA 8.8, sm_100) is not run: never drop an operand.
        raise cx.unsupported(f"'{instr.full_opcode}' with {len(instr.operands) - 1} inputs")
    if is_float(t):
        from kernelcheck.emu.fpu import float_minmax
        return float_minmax(instr, cx, t)
    f = np.minimum if instr.opcode == "min" else np.maximum
    if "relu" in instr.modifiers:
        return _binary(instr, cx, t, lambda a, b: np.maximum(f(a, b), 0).astype(NP_TYPE[t]))
    return _binary(instr, cx, t, f)


# ------------------------------------------------------------------ logic and shifts
@register("and", form("pred " + BITS))
@register("or", form("pred " + BITS))
@register("xor", form("pred " + BITS))
def _logic(instr, cx):
    t = _itype(instr, cx)
    f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[instr.opcode]
    return _binary(instr, cx, t, f)


@register("not", form("pred " + BITS))
def _not(instr, cx):
    t = _itype(instr, cx)
    return _unary(instr, cx, t, np.invert if t != "pred" else np.logical_not)


@register("cnot", form(BITS))
def _cnot(instr, cx):
    t = _itype(instr, cx)
    dt = NP_TYPE[t]
    return _unary(instr, cx, t, lambda a: (np.asarray(a) == 0).astype(dt))


@register("shl", form(BITS))
@register("shr", form(BITS + " " + INT))
def _shift(instr, cx):
    t = _itype(instr, cx)
    dt = NP_TYPE[t]
    bits = 8 * dt.itemsize
    a = cx.src(instr.operands[1], t)
    b = cx.src(instr.operands[2], "u32")
    put = cx.dst(instr.operands[0], t)
    left = instr.opcode == "shl"
    arith = t[0] == "s" and not left

    def run(st, fr, mask):
        x = np.asarray(a(st, fr))
        n = np.asarray(b(st, fr))
        big = n >= bits
        k = np.minimum(n, bits - 1).astype(dt)
        if left:
            r = np.where(big, dt.type(0), x << k)
        elif arith:
            r = x >> k  # an arithmetic shift by bits-1 already gives the sign fill
        else:
            r = np.where(big, dt.type(0), x >> k)
        put(st, fr, r.astype(dt), mask)
    return run


@register("shf", form("b32", "l r clamp wrap", required=["l r", "clamp wrap"]))
def _shf(instr, cx):
    mods = instr.modifiers
    left = "l" in mods
    clamp = "clamp" in mods
    a = cx.src(instr.operands[1], "u32")
    b = cx.src(instr.operands[2], "u32")
    c = cx.src(instr.operands[3], "u32")
    put = cx.dst(instr.operands[0], "u32")

    def run(st, fr, mask):
        lo = np.asarray(a(st, fr)).astype(_U64)
        hi = np.asarray(b(st, fr)).astype(_U64)
        n = np.asarray(c(st, fr)).astype(_U64)
        n = np.minimum(n, _U64(32)) if clamp else n & _U64(31)
        v = (hi << _U64(32)) | lo
        if left:
            r = ((v << n) >> _U64(32)) & _U64(0xFFFFFFFF)
        else:
            r = (v >> n) & _U64(0xFFFFFFFF)
        put(st, fr, r.astype(_U32), mask)
    return run


@register("lop3", form("b32"))
def _lop3(instr, cx):
    a, b, c = (cx.src(o, "b32") for o in instr.operands[1:4])
    lut = instr.operands[4]
    if type(lut).__name__ != "Immediate":
        raise cx.unsupported("lop3 with a non-immediate truth table")
    table = int(lut.value) & 0xFF
    put = cx.dst(instr.operands[0], "b32")

    def run(st, fr, mask):
        x, y, z = (np.asarray(g(st, fr), dtype=_U32) for g in (a, b, c))
        r = np.zeros(np.broadcast(x, y, z).shape, dtype=_U32)
        for k in range(8):
            if table >> k & 1:
                term = (x if k & 4 else ~x) & (y if k & 2 else ~y) & (z if k & 1 else ~z)
                r = r | term
        put(st, fr, r, mask)
    return run


@register("bfe", form("s32 s64 u32 u64"))
def _bfe(instr, cx):
    """bfe (PTX ISA 9.7.1 "Integer Arithmetic Instructions: bfe"): ``pos = b & 0xff``,
    ``len = c & 0xff``; bit ``i`` of ``d`` is ``a[pos+i]`` when ``i < len && pos+i <= msb``,
    else the sign bit ``sbit``, which is 0 for the unsigned types or ``len == 0`` and
    ``a[min(pos+len-1, msb)]`` otherwise: "If the start position is beyond the msb of the
    input, the destination d is filled with the replicated sign bit of the extracted
    field"."""
    t = _itype(instr, cx)
    dt = NP_TYPE[t]
    bits = 8 * dt.itemsize
    a = cx.src(instr.operands[1], t)
    b = cx.src(instr.operands[2], "u32")
    c = cx.src(instr.operands[3], "u32")
    put = cx.dst(instr.operands[0], t)
    signed = t[0] == "s"
    ut = UINT_OF_SIZE[dt.itemsize]
    width_mask = _U64((1 << bits) - 1)

    def low_mask(k):
        # (1 << k) - 1 for k in 0..64 without a shift by 64 (undefined in C and numpy)
        return np.where(k == 0, _U64(0), _ALL64 >> (64 - np.maximum(k, 1)).astype(_U64))

    def run(st, fr, mask):
        x = np.asarray(a(st, fr)).astype(dt).view(ut).astype(_U64) if np.ndim(a(st, fr)) \
            else np.asarray(a(st, fr)).astype(dt).astype(ut).astype(_U64)
        pos = (np.asarray(b(st, fr)).astype(np.int64) & 0xFF)
        ln = (np.asarray(c(st, fr)).astype(np.int64) & 0xFF)
        x, pos, ln = np.broadcast_arrays(x, pos, ln)
        # bits taken from a: those i < len with pos + i <= msb
        taken = np.clip(np.minimum(ln, bits - pos), 0, bits)
        shifted = x >> np.minimum(pos, bits - 1).astype(_U64)
        field = shifted & low_mask(taken)
        if signed:
            sbit_pos = np.minimum(pos + ln - 1, bits - 1)
            sbit = (x >> np.maximum(sbit_pos, 0).astype(_U64)) & _U64(1)
            fill = (sbit == 1) & (ln > 0)
            field = np.where(fill, field | (width_mask & ~low_mask(taken)), field)
        out = (field & width_mask).astype(ut).view(dt)
        put(st, fr, out, mask)
    return run


@register("bfi", form("b32 b64"))
def _bfi(instr, cx):
    t = _itype(instr, cx)
    dt = NP_TYPE[t]
    bits = 8 * dt.itemsize
    a = cx.src(instr.operands[1], t)
    b = cx.src(instr.operands[2], t)
    c = cx.src(instr.operands[3], "u32")
    d = cx.src(instr.operands[4], "u32")
    put = cx.dst(instr.operands[0], t)

    def run(st, fr, mask):
        x = np.asarray(a(st, fr)).astype(_U64)
        y = np.asarray(b(st, fr)).astype(_U64)
        pos = np.minimum(np.asarray(c(st, fr)) & 0xFF, bits).astype(_U64)
        ln = np.minimum(np.asarray(d(st, fr)) & 0xFF, bits).astype(_U64)
        ln = np.minimum(ln, _U64(bits) - pos)
        field = np.where(ln >= 64, ~_U64(0), (_U64(1) << np.minimum(ln, _U64(63))) - _U64(1))
        m = np.where(pos >= 64, _U64(0), field << np.minimum(pos, _U64(63)))
        r = (y & ~m) | ((x << np.minimum(pos, _U64(63))) & m)
        put(st, fr, r.astype(dt), mask)
    return run


@register("prmt", form("b32", "f4e b4e rc8 ecl ecr rc16"))
def _prmt(instr, cx):
    mode = next((m for m in instr.modifiers if m in ("f4e", "b4e", "rc8", "ecl", "ecr",
                                                     "rc16")), None)
    a = cx.src(instr.operands[1], "b32")
    b = cx.src(instr.operands[2], "b32")
    c = cx.src(instr.operands[3], "b32")
    put = cx.dst(instr.operands[0], "b32")

    def run(st, fr, mask):
        x = np.asarray(a(st, fr), dtype=_U32).astype(_U64)
        y = np.asarray(b(st, fr), dtype=_U32).astype(_U64)
        sel = np.asarray(c(st, fr), dtype=_U32)
        v = (y << _U64(32)) | x  # bytes b7..b0 = {b, a}
        shape = np.broadcast(v, sel).shape
        v = np.broadcast_to(v, shape)
        sel = np.broadcast_to(sel, shape)
        byte = [((v >> _U64(8 * k)) & _U64(0xFF)).astype(_U32) for k in range(8)]
        byte = np.stack(byte)  # (8, lanes)
        if mode is None:
            out = np.zeros(shape, dtype=_U32)
            for k in range(4):
                s = (sel >> _U32(4 * k)) & _U32(0xF)
                idx = (s & _U32(7)).astype(np.int64)
                val = np.take_along_axis(byte, idx[None, ...], 0)[0] if shape else byte[idx]
                sign = (s & _U32(8)) != 0
                msb = (val >> _U32(7)) & _U32(1)
                val = np.where(sign, msb * _U32(0xFF), val)
                out = out | (val << _U32(8 * k))
        else:
            n = (sel & _U32(3)).astype(np.int64)
            table = {
                "f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
                "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
                "rc8": [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
                "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
                "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
                "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
            }[mode]
            tab = np.asarray(table, dtype=np.int64)
            out = np.zeros(shape, dtype=_U32)
            for k in range(4):
                idx = tab[n, k]
                val = np.take_along_axis(byte, idx[None, ...], 0)[0] if shape else byte[idx]
                out = out | (val << _U32(8 * k))
        put(st, fr, out, mask)
    return run


# ------------------------------------------------------------------ bit counting
@register("popc", form("b32 b64"))
def _popc(instr, cx):
    t = _itype(instr, cx)

    def popc(a):
        x = np.asarray(a).astype(_U64)
        count = np.zeros(x.shape, dtype=_U32)
        for k in range(8 * NP_TYPE[t].itemsize):
            count += ((x >> _U64(k)) & _U64(1)).astype(_U32)
        return count
    return _unary(instr, cx, t, popc, "u32")


def _msb(x: np.ndarray, bits: int) -> np.ndarray:
    """Index of the highest set bit, -1 when zero."""
    x = np.asarray(x).astype(_U64)
    pos = np.full(x.shape, -1, dtype=np.int64)
    for k in range(bits):
        pos = np.where((x >> _U64(k)) & _U64(1) != 0, k, pos)
    return pos


@register("clz", form("b32 b64"))
def _clz(instr, cx):
    t = _itype(instr, cx)
    bits = 8 * NP_TYPE[t].itemsize
    return _unary(instr, cx, t, lambda a: (bits - 1 - _msb(a, bits)).astype(_U32), "u32")


@register("bfind", form("s32 s64 u32 u64", "shiftamt"))
def _bfind(instr, cx):
    t = _itype(instr, cx)
    bits = 8 * NP_TYPE[t].itemsize
    shift = "shiftamt" in instr.modifiers

    def f(a):
        x = np.asarray(a)
        if t[0] == "s":
            x = np.where(x < 0, ~x, x)
        ux = x.astype(_U64) & _U64((1 << bits) - 1)
        pos = _msb(ux, bits)
        if shift:
            pos = np.where(pos < 0, -1, bits - 1 - pos)
        return pos.astype(np.int64).astype(_U32)
    return _unary(instr, cx, t, f, "u32")


@register("brev", form("b32 b64"))
def _brev(instr, cx):
    t = _itype(instr, cx)
    dt = NP_TYPE[t]
    bits = 8 * dt.itemsize

    def f(a):
        x = np.asarray(a).astype(_U64)
        r = np.zeros(x.shape, dtype=_U64)
        for k in range(bits):
            r |= ((x >> _U64(k)) & _U64(1)) << _U64(bits - 1 - k)
        return r.astype(dt)
    return _unary(instr, cx, t, f)


@register("fns", form("b32"))
def _fns(instr, cx):
    """fns.b32 d, mask, base, offset (ISA 9.7.1.23): the bit position of the |offset|-th set
    bit of ``mask`` counting from ``base`` upward (offset > 0) or downward (offset < 0),
    ``base`` itself when offset is 0 and that bit is set; 0xffffffff when there is none."""
    m = cx.src(instr.operands[1], "b32")
    b = cx.src(instr.operands[2], "u32")
    o = cx.src(instr.operands[3], "s32")
    put = cx.dst(instr.operands[0], "b32")

    def run(st, fr, mask):
        bits = np.asarray(m(st, fr)).astype(np.int64)
        base = np.asarray(b(st, fr)).astype(np.int64)
        off = np.asarray(o(st, fr)).astype(np.int64)
        shape = np.broadcast(bits, base, off).shape
        bits, base, off = (np.broadcast_to(v, shape) for v in (bits, base, off))
        result = np.full(shape, -1, dtype=np.int64)
        found = np.zeros(shape, dtype=bool)
        remaining = np.abs(off)
        step = np.where(off < 0, -1, 1)
        for k in range(32):
            pos = base + step * k
            inside = (pos >= 0) & (pos < 32)
            set_bit = inside & (((bits >> np.clip(pos, 0, 31)) & 1) == 1)
            # offset 0 looks at base only; otherwise count set bits until |offset|.
            hit = set_bit & ~found & np.where(off == 0, k == 0, remaining == 1)
            result = np.where(hit, pos, result)
            found |= hit
            remaining = np.where(set_bit & ~found & (off != 0), remaining - 1, remaining)
        put(st, fr, (result & 0xFFFFFFFF).astype(_U32), mask)
    return run


@register("bmsk", form("b32", "clamp wrap", required=["clamp wrap"]))
def _bmsk(instr, cx):
    """bmsk.mode.b32 d, a, b (ISA 9.7.1.25): ``b`` one bits starting at bit ``a``; ``.wrap``
    takes both modulo 32, ``.clamp`` gives no bits past bit 31 (position >= 32: 0)."""
    a = cx.src(instr.operands[1], "u32")
    b = cx.src(instr.operands[2], "u32")
    put = cx.dst(instr.operands[0], "b32")
    clamp = "clamp" in instr.modifiers
    ones = np.int64(0xFFFFFFFF)

    def run(st, fr, mask):
        x = np.asarray(a(st, fr)).astype(np.int64)
        y = np.asarray(b(st, fr)).astype(np.int64)
        a1, b1 = x & 31, y & 31
        total = a1 + b1
        mask0 = (ones << a1) & ones
        mask1 = np.where(total >= 32, 0, (ones << np.minimum(total, 31)) & ones)
        if clamp:
            mask0 = np.where(x >= 32, 0, mask0)
            mask1 = np.where((x >= 32) | (y >= 32), 0, mask1)
        mask1 = np.where((total < 32) & ~((x >= 32) | (y >= 32) if clamp else False)
                         & (b1 == 0), ones, mask1)
        put(st, fr, (mask0 & ~mask1 & ones).astype(_U32), mask)
    return run


@register("szext", form("s32 u32", "clamp wrap", required=["clamp wrap"]))
def _szext(instr, cx):
    """szext.mode.type d, a, b (ISA 9.7.1.26): sign- (s32) or zero- (u32) extend the low
    ``b`` bits of ``a``; ``.wrap`` takes ``b`` modulo 32, ``.clamp`` keeps all of ``a``
    when ``b >= 32``; a width of 0 (after ``.wrap``) keeps no bit: the result is 0."""
    a = cx.src(instr.operands[1], "u32")
    b = cx.src(instr.operands[2], "u32")
    put = cx.dst(instr.operands[0], "b32")
    clamp = "clamp" in instr.modifiers
    signed = "s32" in instr.modifiers
    ones = np.int64(0xFFFFFFFF)

    def run(st, fr, mask):
        x = np.asarray(a(st, fr)).astype(np.int64)
        y = np.asarray(b(st, fr)).astype(np.int64)
        b1 = y & 31
        too_large = (y >= 32) if clamp else np.zeros(np.shape(y), bool)
        m = np.where(too_large, 0, (ones << b1) & ones)
        sign = (x >> ((b1 - 1) & 31)) & 1 if signed else np.zeros(np.shape(x), np.int64)
        sign = np.where((b1 == 0) | too_large, 0, sign)
        r = (x & ~m & ones) | np.where(sign == 1, m, 0)
        put(st, fr, (r & ones).astype(_U32), mask)
    return run


@register("dp4a", form("u32.u32 u32.s32 s32.u32 s32.s32"))
@register("dp2a", form("u32.u32 u32.s32 s32.u32 s32.s32", "lo hi", required=["lo hi"]))
def _dp(instr, cx):
    ta, tb = [m for m in instr.modifiers if m in ("u32", "s32")][:2]
    a = cx.src(instr.operands[1], "b32")
    b = cx.src(instr.operands[2], "b32")
    c = cx.src(instr.operands[3], "s32" if "s32" in (ta, tb) else "u32")
    out_t = "s32" if "s32" in (ta, tb) else "u32"
    put = cx.dst(instr.operands[0], out_t)
    four = instr.opcode == "dp4a"
    hi = "hi" in instr.modifiers

    def parts(v, signed, width, count, base=0):
        v = np.asarray(v, dtype=_U32).astype(np.int64)
        out = []
        for k in range(count):
            p = (v >> (width * (k + base))) & ((1 << width) - 1)
            if signed:
                p = np.where(p >> (width - 1), p - (1 << width), p)
            out.append(p)
        return out

    def run(st, fr, mask):
        if four:
            xs = parts(a(st, fr), ta[0] == "s", 8, 4)
            ys = parts(b(st, fr), tb[0] == "s", 8, 4)
        else:
            xs = parts(a(st, fr), ta[0] == "s", 16, 2)
            ys = parts(b(st, fr), tb[0] == "s", 8, 2, 2 if hi else 0)
        acc = np.asarray(c(st, fr)).astype(np.int64)
        for x, y in zip(xs, ys, strict=True):
            acc = acc + x * y
        put(st, fr, (acc & 0xFFFFFFFF).astype(_U32).view(NP_TYPE[out_t]), mask)
    return run


# ------------------------------------------------------------------ selection
@register("selp", form(BITS + " " + INT + " f32 f64"))
def _selp(instr, cx):
    t = _itype(instr, cx)
    a = cx.src(instr.operands[1], t)
    b = cx.src(instr.operands[2], t)
    p = cx.src(instr.operands[3], "pred")
    put = cx.dst(instr.operands[0], t)

    def run(st, fr, mask):
        put(st, fr, np.where(p(st, fr), a(st, fr), b(st, fr)).astype(NP_TYPE[t]), mask)
    return run


@register("slct", form(" ".join(f"{t}.s32" for t in (BITS + " " + INT + " f32 f64").split())),
          form(" ".join(f"{t}.f32" for t in (BITS + " " + INT + " f32 f64").split()), "ftz"))
def _slct(instr, cx):
    types = [m for m in instr.modifiers if m in NP_TYPE]
    t, ct = types[0], types[-1]
    a = cx.src(instr.operands[1], t)
    b = cx.src(instr.operands[2], t)
    c = cx.src(instr.operands[3], ct)
    put = cx.dst(instr.operands[0], t)

    ftz = "ftz" in instr.modifiers

    def run(st, fr, mask):
        # slct (ISA 9.7.7.2): a when c >= 0 (-0.0 included, NaN not); .ftz reads a
        # subnormal f32 c as zero of its sign, so -subnormal selects a.
        cv = np.asarray(c(st, fr))
        if ftz:
            cv = np.where((np.abs(cv) < np.float32(1.1754944e-38)) & (cv != 0),
                          np.copysign(np.float32(0), cv), cv)
        put(st, fr, np.where(cv >= 0, a(st, fr), b(st, fr)).astype(NP_TYPE[t]), mask)
    return run


_ = _signed, _unsigned
