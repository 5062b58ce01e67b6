"""Video instructions (PTX ISA 9.7.10 "Video Instructions"): the scalar forms vadd, vsub,
vabsdiff, vmin, vmax, vshl, vshr, vmad, vset and the SIMD forms vadd2/vadd4, vsub2/vsub4,
vavrg2/vavrg4, vabsdiff2/vabsdiff4, vmin2/vmin4, vmax2/vmax4, vset2/vset4.

Operands are read without byte or half-word selectors (the Kernel IR has none): a scalar
video instruction takes each operand's whole 32-bit word (ISA 9.7.10.1: with no selector the
operand is the full word), and the SIMD forms use their default selectors (``.h10``/``.h32``
and ``.b3210``/``.b7654``: half-word or byte ``i`` of ``a`` and of ``b``) and the default
mask (every element). Values are sign- or zero-extended by their type and computed without
overflow, then saturated (``.sat``) or truncated to the destination's width; the secondary
operation (``.add``/``.min``/``.max`` with ``c``) follows, as the ISA's pseudo-code orders.
"""

from __future__ import annotations

import numpy as np

from kernelcheck.emu.dispatch import form, register

__all__: list[str] = []

_TYPES3 = [f"{d}.{a}.{b}" for d in ("u32", "s32") for a in ("u32", "s32") for b in ("u32", "s32")]
_TYPES2 = [f"{a}.{b}" for a in ("u32", "s32") for b in ("u32", "s32")]
_CMP = "eq ne lt le gt ge"
_COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}


def _types(instr):
    return [m for m in instr.modifiers if m in ("u32", "s32")]


def _word(get, signed: bool):
    """The operand's 32-bit word, sign- or zero-extended to int64."""
    def read(st, fr):
        v = np.asarray(get(st, fr)).astype(np.uint32)
        return v.view(np.int32).astype(np.int64) if signed else v.astype(np.int64)
    return read


def _saturate32(v, signed: bool, sat: bool):
    if sat:
        return np.clip(v, -2**31, 2**31 - 1) if signed else np.clip(v, 0, 2**32 - 1)
    return v


def _secondary(op2, tmp, c, signed: bool):
    if op2 == "add":
        return tmp + c
    if op2 == "min":
        return np.minimum(tmp, c)
    if op2 == "max":
        return np.maximum(tmp, c)
    return tmp


def _scalar(instr, cx, compute):
    """Common frame of the scalar forms: ``compute(ta, tb) -> tmp`` (int64)."""
    types = _types(instr)
    dtype, atype, btype = (types + ["u32"] * 3)[:3] if instr.opcode != "vset" else (
        "u32", types[0], types[1])
    sat = "sat" in instr.modifiers
    op2 = next((m for m in instr.modifiers if m in ("add", "min", "max")), None)
    ops = instr.operands
    a = _word(cx.src(ops[1], "b32"), atype == "s32")
    b = _word(cx.src(ops[2], "b32"), btype == "s32")
    signed = dtype == "s32"
    c = _word(cx.src(ops[3], "b32"), signed) if op2 is not None else None
    if op2 is None and len(ops) > 3:
        raise cx.unsupported(f"'{instr.full_opcode}' with a merge operand (a destination "
                             f"selector is needed)")
    put = cx.dst(ops[0], "b32")

    def run(st, fr, mask):
        tmp = _saturate32(compute(a(st, fr), b(st, fr)), signed, sat)
        if c is not None:
            tmp = _secondary(op2, tmp, c(st, fr), signed)
        put(st, fr, (np.asarray(tmp) & 0xFFFFFFFF).astype(np.uint32), mask)
    return run


_SCALAR = {"vadd": np.add, "vsub": np.subtract, "vabsdiff": lambda x, y: np.abs(x - y),
           "vmin": np.minimum, "vmax": np.maximum}

for _name, _fn in _SCALAR.items():
    register(_name, form(_TYPES3, "sat add min max"))(
        lambda instr, cx, _fn=_fn: _scalar(instr, cx, _fn))


def _shift(instr, cx):
    clamp = "clamp" in instr.modifiers
    left = instr.opcode == "vshl"

    def compute(ta, tb):
        # tb is read as u32 (the .u32 btype is fixed); .clamp caps it at 32, .wrap takes it
        # modulo 32 (ISA 9.7.10.2 vshl/vshr).
        tb = np.minimum(tb, 32) if clamp else tb & 31
        return ta << tb if left else ta >> tb
    return _scalar(instr, cx, compute)


_SHIFT_TYPES = [f"{d}.{a}.u32" for d in ("u32", "s32") for a in ("u32", "s32")]
register("vshl", form(_SHIFT_TYPES, "sat clamp wrap add min max", required=["clamp wrap"]))(
    _shift)
register("vshr", form(_SHIFT_TYPES, "sat clamp wrap add min max", required=["clamp wrap"]))(
    _shift)


@register("vset", form(_TYPES2, _CMP + " add min max", required=[_CMP]))
def _vset(instr, cx):
    """vset.atype.btype.cmp d, a, b{, c} (ISA 9.7.10.3): 1 when the comparison holds."""
    cmp = _COMPARE[next(m for m in instr.modifiers if m in _COMPARE)]
    return _scalar(instr, cx, lambda ta, tb: cmp(ta, tb).astype(np.int64))


@register("vmad", form(_TYPES3, "sat shr7 shr15 po"))
def _vmad(instr, cx):
    """vmad.dtype.atype.btype{.po}{.sat}{.scale} d, a, b, c (ISA 9.7.10.4): ``a*b + c``
    (``+ 1`` with ``.po``) in 128 bits, shifted right by 7 or 15 with ``.scale``, kept to 64
    bits, then clamped to the signed or unsigned 32-bit range with ``.sat`` (signed when
    either input type is) and truncated to 32 bits."""
    _, atype, btype = _types(instr)
    sat = "sat" in instr.modifiers
    po = "po" in instr.modifiers
    shift = 7 if "shr7" in instr.modifiers else 15 if "shr15" in instr.modifiers else 0
    signed_final = "s32" in (atype, btype)
    ops = instr.operands
    a = _word(cx.src(ops[1], "b32"), atype == "s32")
    b = _word(cx.src(ops[2], "b32"), btype == "s32")
    c = _word(cx.src(ops[3], "b32"), signed_final)
    put = cx.dst(ops[0], "b32")

    def run(st, fr, mask):
        x, y, z = (np.asarray(g(st, fr)).astype(object) for g in (a, b, c))
        tmp = x * y + z + (1 if po else 0)
        result = np.vectorize(lambda v: ((v >> shift) & (2**64 - 1)), otypes=[object])(tmp)
        if sat:
            if signed_final:
                result = np.vectorize(lambda v: min(max(v - (2**64 if v >> 63 else 0),
                                                        -2**31), 2**31 - 1),
                                      otypes=[object])(result)
            else:
                result = np.vectorize(lambda v: min(v, 2**32 - 1), otypes=[object])(result)
        out = np.vectorize(lambda v: int(v) & 0xFFFFFFFF, otypes=[np.uint32])(result)
        put(st, fr, np.asarray(out, dtype=np.uint32), mask)
    return run


# ------------------------------------------------------------------ SIMD forms
def _avrg(x, y):
    s = x + y
    return np.where(s >= 0, (s + 1) >> 1, s >> 1)


_SIMD = {"vadd": np.add, "vsub": np.subtract, "vavrg": _avrg,
         "vabsdiff": lambda x, y: np.abs(x - y), "vmin": np.minimum, "vmax": np.maximum}


def _parts(word, count: int, signed: bool):
    """The ``count`` elements of a 32-bit word, element 0 in the low bits, extended."""
    width = 32 // count
    w = np.asarray(word).astype(np.uint32).astype(np.int64)
    out = []
    for i in range(count):
        p = (w >> (width * i)) & ((1 << width) - 1)
        if signed:
            p = np.where(p >> (width - 1), p - (1 << width), p)
        out.append(p)
    return out


def _simd(instr, cx, count: int, compute):
    """vop2/vop4 (ISA 9.7.10.5-6): per element ``t[i] = op(Va[i], Vb[i])`` (saturated to the
    element width with ``.sat``); ``.add`` gives ``c + sum(t)``, otherwise the elements are
    packed into ``d`` (every element selected by the default mask, so ``c`` is not used)."""
    types = _types(instr)
    if instr.opcode.startswith("vset"):
        dtype, atype, btype = "u32", types[0], types[1]
    else:
        dtype, atype, btype = types[:3]
    sat = "sat" in instr.modifiers
    accumulate = "add" in instr.modifiers
    ops = instr.operands
    a = cx.src(ops[1], "b32")
    b = cx.src(ops[2], "b32")
    c = cx.src(ops[3], "b32")
    put = cx.dst(ops[0], "b32")
    width = 32 // count
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if dtype == "s32" else (
        0, (1 << width) - 1)

    def run(st, fr, mask):
        va = _parts(a(st, fr), count, atype == "s32")
        vb = _parts(b(st, fr), count, btype == "s32")
        ts = [compute(x, y) for x, y in zip(va, vb, strict=True)]
        if sat:
            ts = [np.clip(t, lo, hi) for t in ts]
        if accumulate:
            d = np.asarray(c(st, fr)).astype(np.uint32).astype(np.int64)
            for t in ts:
                d = d + t
        else:
            d = np.zeros(np.broadcast(*ts).shape, dtype=np.int64)
            for i, t in enumerate(ts):
                d = d | ((t & ((1 << width) - 1)) << (width * i))
        put(st, fr, (d & 0xFFFFFFFF).astype(np.uint32), mask)
    return run


for _name, _fn in _SIMD.items():
    for _count in (2, 4):
        register(f"{_name}{_count}", form(_TYPES3, "sat"), form(_TYPES3, "add"))(
            lambda instr, cx, _fn=_fn, _count=_count: _simd(instr, cx, _count, _fn))

def _vset_simd(instr, cx, count: int):
    cmp = _COMPARE[next(m for m in instr.modifiers if m in _COMPARE)]
    return _simd(instr, cx, count, lambda x, y: cmp(x, y).astype(np.int64))


for _count in (2, 4):
    register(f"vset{_count}", form(_TYPES2, _CMP, required=[_CMP]),
             form(_TYPES2, _CMP + " add", required=[_CMP, "add"]))(
        lambda instr, cx, _count=_count: _vset_simd(instr, cx, _count))
