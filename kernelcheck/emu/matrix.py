"""Warp-level matrix instructions: ``mma.sync``, ``ldmatrix``, ``stmatrix``, ``movmatrix``.

A warp is a row of the ``(lanes // 32, 32)`` reshape of the batch (see
:mod:`kernelcheck.emu.executor`). Each instruction gathers the fragments the 32 lanes hold
into whole matrices, computes, and scatters the result back to the lanes that execute it.

Fragment layouts (PTX ISA 9.7.14.5 "Matrix multiply-accumulate operation using mma
instruction", the "Matrix Fragments for mma.m16n8k*" sections, and 9.7.14.5.15 ldmatrix):
with ``g = laneid >> 2`` (groupID) and ``t = laneid & 3`` (threadID_in_group), element ``i``
of a lane's fragment (registers in order, the low bits of a register first) is at the
(row, column) the functions of :data:`_LAYOUTS` give.

Arithmetic: floating-point products of the inputs are exact in float64 and the sum of a row
of products and ``c`` is formed in float64 and rounded once to the accumulator type. The ISA
leaves the order and intermediate precision of the tensor-core accumulation to the
implementation, so the last bit of an f32 result may differ from a given GPU; integer
``mma`` is exact (wrapping modulo 2**32, or clamped with ``.satfinite``). ``.tf32`` inputs
use the 19 high bits of each 32-bit register (the low 13 bits are ignored, as the format
has 10 mantissa bits). The shape ``m8n8k4`` of f16 is four 8x8x4 products per warp, each
held by a pair of quads (:func:`_mma_quads`). The sparse, block-scaled and sub-byte forms are
not run: they are rejected at compile time.
"""

from __future__ import annotations

import numpy as np

from kernelcheck.emu.dispatch import form, register
from kernelcheck.emu.memops import Access, guard_writes, space_of_instruction
from kernelcheck.emu.narrow import MINIFLOATS, decode_minifloat
from kernelcheck.emu.values import bf16_to_f32
from kernelcheck.ir.nodes import VectorOperand

__all__: list[str] = []

_U32 = np.uint32
_LANE = np.arange(32)
_G = _LANE >> 2
_T = _LANE & 3


def _idx(n, row, col):
    """(rows, cols) index arrays of shape (32, n) from formulas of (g, t, i)."""
    i = np.arange(n)[None, :]
    g, t = _G[:, None], _T[:, None]
    return np.broadcast_to(row(g, t, i), (32, n)), np.broadcast_to(col(g, t, i), (32, n))


# shape -> element kind -> (A layout, B layout, C layout); A is row-major, B column-major.
_ACC16 = (4, lambda g, t, i: g + 8 * (i >> 1), lambda g, t, i: t * 2 + (i & 1))
_ACC8 = (2, lambda g, t, i: g, lambda g, t, i: t * 2 + i)
_LAYOUTS = {
    ("m16n8k16", "half"): (
        (8, lambda g, t, i: g + 8 * ((i >> 1) & 1),
         lambda g, t, i: t * 2 + (i & 1) + 8 * (i >> 2)),
        (4, lambda g, t, i: t * 2 + (i & 1) + 8 * (i >> 1), lambda g, t, i: g),
        _ACC16),
    ("m16n8k8", "half"): (
        (4, lambda g, t, i: g + 8 * (i >> 1), lambda g, t, i: t * 2 + (i & 1)),
        (2, lambda g, t, i: t * 2 + i, lambda g, t, i: g),
        _ACC16),
    ("m16n8k8", "tf32"): (
        (4, lambda g, t, i: g + 8 * (i & 1), lambda g, t, i: t + 4 * (i >> 1)),
        (2, lambda g, t, i: t + 4 * i, lambda g, t, i: g),
        _ACC16),
    ("m16n8k4", "tf32"): (
        (2, lambda g, t, i: g + 8 * i, lambda g, t, i: t),
        (1, lambda g, t, i: t, lambda g, t, i: g),
        _ACC16),
    ("m16n8k32", "byte"): (
        (16, lambda g, t, i: g + 8 * ((i >> 2) & 1),
         lambda g, t, i: t * 4 + (i & 3) + 16 * (i >> 3)),
        (8, lambda g, t, i: t * 4 + (i & 3) + 16 * (i >> 2), lambda g, t, i: g),
        _ACC16),
    ("m16n8k16", "byte"): (
        (8, lambda g, t, i: g + 8 * (i >> 2), lambda g, t, i: t * 4 + (i & 3)),
        (4, lambda g, t, i: t * 4 + i, lambda g, t, i: g),
        _ACC16),
    ("m8n8k16", "byte"): (
        (4, lambda g, t, i: g, lambda g, t, i: t * 4 + i),
        (4, lambda g, t, i: t * 4 + i, lambda g, t, i: g),
        _ACC8),
    ("m8n8k4", "f64"): (
        (1, lambda g, t, i: g, lambda g, t, i: t),
        (1, lambda g, t, i: t, lambda g, t, i: g),
        _ACC8),
}
_DIMS = {"m16n8k16": (16, 8, 16), "m16n8k8": (16, 8, 8), "m16n8k4": (16, 8, 4),
         "m16n8k32": (16, 8, 32), "m8n8k16": (8, 8, 16), "m8n8k4": (8, 8, 4)}

_MMA_COMMON = "sync aligned row col"
_MMA_FORMS = (
    form([f"{d}.{a}.{a}.{c}" for d in ("f32", "f16") for c in ("f32", "f16") for a in ("f16",)],
         _MMA_COMMON + " m16n8k16 m16n8k8", required=["m16n8k16 m16n8k8", "sync"]),
    form("f32.bf16.bf16.f32", _MMA_COMMON + " m16n8k16 m16n8k8",
         required=["m16n8k16 m16n8k8", "sync"]),
    form("f32.tf32.tf32.f32", _MMA_COMMON + " m16n8k8 m16n8k4",
         required=["m16n8k8 m16n8k4", "sync"]),
    form([f"s32.{a}.{b}.s32" for a in ("s8", "u8") for b in ("s8", "u8")],
         _MMA_COMMON + " m16n8k32 m16n8k16 m8n8k16 satfinite",
         required=["m16n8k32 m16n8k16 m8n8k16", "sync"]),
    form([f"{d}.{a}.{b}.{c}" for d in ("f32",) for c in ("f32",) for a in ("e4m3", "e5m2")
          for b in ("e4m3", "e5m2")], _MMA_COMMON + " m16n8k32", required=["m16n8k32", "sync"]),
    form("f64.f64.f64.f64", _MMA_COMMON + " m8n8k4", required=["m8n8k4", "sync"]),
    # m8n8k4 on .f16: "When .ctype is .f32, .dtype must also be .f32" (9.7.14.5.14).
    form("f16.f16.f16.f16 f32.f16.f16.f16 f32.f16.f16.f32", _MMA_COMMON + " m8n8k4",
         required=["m8n8k4", "sync"]),
)

# mma.m8n8k4 on .f16 (9.7.14.5.1 "Matrix Fragments for mma.m8n8k4 with .f16 floating point
# type"): the warp computes four independent 8x8x4 products; product q is held by lanes
# 4q..4q+3 (the low group) and 16+4q..16+4q+3 (the high group). With r = %laneid % 4 and
# h = 4 for the high group (0 for the low one), element i of a lane's fragment is at:
#   A row-major  (r + h, i)      A col-major  (i + h, r)        i = 0..3
#   B row-major  (r, i + h)      B col-major  (i, r + h)        i = 0..3
#   C/D .f16     (r + h, i)                                     i = 0..7
#   C/D .f32     ((lane & 1) + (i & 2) + h, (i & 4) + (lane & 2) + (i & 1))   i = 0..7
# Each function gives (product, row, column) of element i of lane l.
_Q = (_LANE >> 2) & 3
_H = np.where(_LANE >= 16, 4, 0)
_R = _LANE & 3


def _quad_layout(n, row, col):
    """(product, rows, cols) index arrays of shape (32, n) of an m8n8k4 .f16 fragment."""
    i = np.arange(n)[None, :]
    lane, h, r = _LANE[:, None], _H[:, None], _R[:, None]
    shape = (32, n)
    return (np.broadcast_to(_Q[:, None], shape), np.broadcast_to(row(lane, h, r, i), shape),
            np.broadcast_to(col(lane, h, r, i), shape))


_QUAD_A = {"row": _quad_layout(4, lambda lane, h, r, i: r + h, lambda lane, h, r, i: i),
           "col": _quad_layout(4, lambda lane, h, r, i: i + h, lambda lane, h, r, i: r)}
_QUAD_B = {"row": _quad_layout(4, lambda lane, h, r, i: r, lambda lane, h, r, i: i + h),
           "col": _quad_layout(4, lambda lane, h, r, i: i, lambda lane, h, r, i: r + h)}
_QUAD_C = {"f16": _quad_layout(8, lambda lane, h, r, i: r + h, lambda lane, h, r, i: i),
           "f32": _quad_layout(8, lambda lane, h, r, i: (lane & 1) + (i & 2) + h,
                               lambda lane, h, r, i: (i & 4) + (lane & 2) + (i & 1))}


def _elements(operand):
    return operand.elements if type(operand) is VectorOperand else (operand,)


def _unpack(words, kind, atype):
    """Element values (float64 or int64) of fragment words (warps, 32, regs)."""
    if kind == "half":
        halves = np.stack([words & _U32(0xFFFF), words >> _U32(16)], axis=-1).astype(np.uint16)
        halves = halves.reshape(words.shape[0], 32, -1)
        if atype == "bf16":
            return bf16_to_f32(halves).astype(np.float64)
        return halves.view(np.float16).astype(np.float64)
    if kind == "tf32":
        return (words & _U32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if kind == "f64":
        return words.view(np.float64)
    # bytes, low byte first
    parts = np.stack([(words >> _U32(8 * k)) & _U32(0xFF) for k in range(4)], axis=-1)
    parts = parts.reshape(words.shape[0], 32, -1)
    if atype == "s8":
        return parts.astype(np.int64) - ((parts.astype(np.int64) & 0x80) << 1)
    if atype == "u8":
        return parts.astype(np.int64)
    return decode_minifloat(parts, MINIFLOATS[atype])


def _gather(values, layout, rows, cols):
    """Whole matrices (warps, rows, cols) from per-lane fragments (warps, 32, n)."""
    n, rf, cf = layout
    r, c = _idx(n, rf, cf)
    out = np.zeros((values.shape[0], rows, cols), dtype=values.dtype)
    out[:, r, c] = values[:, :, :n]
    return out


def _scatter(matrix, layout):
    n, rf, cf = layout
    r, c = _idx(n, rf, cf)
    return matrix[:, r, c]


@register("mma", *_MMA_FORMS)
def _mma(instr, cx):
    """mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype d, a, b, c (ISA 9.7.14.5.14)."""
    types = [m for m in instr.modifiers if m in ("f16", "f32", "bf16", "tf32", "s32", "s8",
                                                 "u8", "e4m3", "e5m2", "f64")]
    dtype, atype, btype, ctype = types
    shape = next(m for m in instr.modifiers if m in _DIMS)
    if shape == "m8n8k4" and atype == "f16":
        return _mma_quads(instr, cx, dtype, ctype)
    kind = {"f16": "half", "bf16": "half", "tf32": "tf32", "f64": "f64"}.get(atype, "byte")
    layout = _LAYOUTS.get((shape, kind))
    if layout is None or "row" not in instr.modifiers or "col" not in instr.modifiers:
        raise cx.unsupported(f"mma shape .{shape} with .{atype} inputs and these layouts")
    la, lb, lc = layout
    m, n, k = _DIMS[shape]
    satfinite = "satfinite" in instr.modifiers
    d_op, a_op, b_op, c_op = instr.operands[:4]
    wide = "b64" if dtype == "f64" else "b32"
    get_a = [cx.src(e, wide) for e in _elements(a_op)]
    get_b = [cx.src(e, wide) for e in _elements(b_op)]
    get_c = [cx.src(e, wide) for e in _elements(c_op)]
    puts = [cx.dst(e, wide) for e in _elements(d_op)]
    per_word = {"half": 2, "tf32": 1, "f64": 1, "byte": 4}[kind]
    acc_per_word = 2 if ctype == "f16" else 1
    if len(get_a) * per_word != la[0] or len(get_b) * per_word != lb[0] or (
            len(get_c) * acc_per_word != lc[0] or len(puts) * (2 if dtype == "f16" else 1)
            != lc[0]):
        raise cx.unsupported(f"operand counts of '{instr.full_opcode}'")
    udt = np.uint64 if wide == "b64" else _U32

    def words(st, fr, getters):
        cols = [np.broadcast_to(np.asarray(g(st, fr)).astype(udt), (st.L,)) for g in getters]
        return np.stack(cols, axis=-1).reshape(st.L // 32, 32, len(getters))

    def accumulator(w):
        if ctype == "f16":
            halves = np.stack([w & _U32(0xFFFF), w >> _U32(16)], axis=-1).astype(np.uint16)
            return halves.reshape(w.shape[0], 32, -1).view(np.float16).astype(np.float64)
        if ctype == "s32":
            return w.view(np.int32).astype(np.int64)
        if ctype == "f64":
            return w.view(np.float64)
        return w.view(np.float32).astype(np.float64)

    def run(st, fr, mask):
        A = _gather(_unpack(words(st, fr, get_a), kind, atype), la, m, k)
        B = _gather(_unpack(words(st, fr, get_b), kind, btype), lb, k, n)
        C = _gather(accumulator(words(st, fr, get_c)), lc, m, n)
        if kind == "byte" and atype in ("s8", "u8"):
            D = np.einsum("wmk,wkn->wmn", A, B) + C
            if satfinite:
                D = np.clip(D, -2**31, 2**31 - 1)
            out = (D & 0xFFFFFFFF).astype(np.uint32)
        else:
            with np.errstate(all="ignore"):
                D = np.einsum("wmk,wkn->wmn", A, B) + C
            if dtype == "f16":
                out = D.astype(np.float16)
            elif dtype == "f64":
                out = D
            else:
                out = D.astype(np.float32)
        frag = _scatter(out, lc).reshape(st.L, -1)
        if dtype == "f16":
            bits = frag.view(np.uint16).astype(_U32)
            frag = bits[:, 0::2] | (bits[:, 1::2] << _U32(16))
        else:
            frag = frag.view(np.uint64 if dtype == "f64" else _U32)
        for j, put in enumerate(puts):
            put(st, fr, np.ascontiguousarray(frag[:, j]), mask)
    return run


def _halves(w):
    """f16 elements (float64) of f16x2 words (warps, 32, regs), the low half first."""
    halves = np.stack([w & _U32(0xFFFF), w >> _U32(16)], axis=-1).astype(np.uint16)
    return halves.reshape(w.shape[0], 32, -1).view(np.float16).astype(np.float64)


def _mma_quads(instr, cx, dtype, ctype):
    """mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype (ISA 9.7.14.5.14, the
    fragments of 9.7.14.5.1): four 8x8x4 products per warp, A and B in either layout
    (``.alayout`` is the first of the two layout qualifiers, ``.blayout`` the second).

    "Element-wise multiplication of matrix A and B is performed with at least single
    precision", and "the accumulation order, rounding and handling of subnormal inputs are
    unspecified": the products and sums are exact in float64, rounded once to ``dtype``.
    """
    layouts = [m for m in instr.modifiers if m in ("row", "col")]
    if len(layouts) != 2:
        raise cx.unsupported(f"'{instr.full_opcode}' needs .alayout and .blayout")
    la, lb = _QUAD_A[layouts[0]], _QUAD_B[layouts[1]]
    lc, ld = _QUAD_C[ctype], _QUAD_C[dtype]
    d_op, a_op, b_op, c_op = instr.operands[:4]
    get_a = [cx.src(e, "b32") for e in _elements(a_op)]
    get_b = [cx.src(e, "b32") for e in _elements(b_op)]
    get_c = [cx.src(e, "b32") for e in _elements(c_op)]
    puts = [cx.dst(e, "b32") for e in _elements(d_op)]
    regs = {"f16": 4, "f32": 8}
    if len(get_a) != 2 or len(get_b) != 2 or len(get_c) != regs[ctype] or (
            len(puts) != regs[dtype]):
        raise cx.unsupported(f"operand counts of '{instr.full_opcode}'")

    def words(st, fr, getters):
        cols = [np.broadcast_to(np.asarray(g(st, fr)).astype(_U32), (st.L,)) for g in getters]
        return np.stack(cols, axis=-1).reshape(st.L // 32, 32, len(getters))

    def gather(values, layout, rows, cols):
        out = np.zeros((values.shape[0], 4, rows, cols))
        out[:, layout[0], layout[1], layout[2]] = values
        return out

    def run(st, fr, mask):
        A = gather(_halves(words(st, fr, get_a)), la, 8, 4)
        B = gather(_halves(words(st, fr, get_b)), lb, 4, 8)
        cw = words(st, fr, get_c)
        C = gather(_halves(cw) if ctype == "f16" else
                   cw.view(np.float32).astype(np.float64), lc, 8, 8)
        with np.errstate(all="ignore"):
            D = np.einsum("wqmk,wqkn->wqmn", A, B) + C
        frag = D[:, ld[0], ld[1], ld[2]].reshape(st.L, -1)
        if dtype == "f16":
            bits = frag.astype(np.float16).view(np.uint16).astype(_U32)
            frag = bits[:, 0::2] | (bits[:, 1::2] << _U32(16))
        else:
            frag = frag.astype(np.float32).view(_U32)
        for j, put in enumerate(puts):
            put(st, fr, np.ascontiguousarray(frag[:, j]), mask)
    return run


# ------------------------------------------------------------------ ldmatrix / stmatrix
_NUM = {"x1": 1, "x2": 2, "x4": 4}
_LDST_MODS = "sync aligned m8n8 x1 x2 x4 trans shared shared::cta"


def _rows_of(st, fr, acc, lanes_in_warp, mask, kind):
    """The lanes that give row addresses (lane < 8 * num of each warp that executes)."""
    active = st.alive if mask is None else mask
    lane = np.arange(st.L) & 31
    return np.nonzero(active & (lane < lanes_in_warp))[0]


@register("ldmatrix", form("b16", _LDST_MODS, required=["m8n8", "x1 x2 x4", "sync"]))
def _ldmatrix(instr, cx):
    """ldmatrix.sync.aligned.m8n8.num{.trans}{.shared}.b16 r, [p] (ISA 9.7.14.5.15): lanes
    8j..8j+7 give the row addresses of matrix j (16 bytes each); register j of lane l holds
    elements (g, 2t) and (g, 2t+1) of matrix j, or of its transpose with ``.trans``."""
    num = next(_NUM[m] for m in instr.modifiers if m in _NUM)
    trans = "trans" in instr.modifiers
    acc = Access(instr, cx, instr.operands[1], space_of_instruction(instr), 16, "read")
    puts = [cx.dst(e, "b32") for e in _elements(instr.operands[0])]
    if len(puts) != num:
        raise cx.unsupported(f"'{instr.full_opcode}' needs {num} destination registers")

    def run(st, fr, mask):
        rows = _rows_of(st, fr, acc, 8 * num, mask, "read")
        data = np.zeros((st.L, 8), dtype=np.uint16)
        if len(rows):
            for buf, off, pos, alloc in acc.locate(st, fr, rows):
                raw = buf[off[:, None] + np.arange(16)[None, :]]
                data[rows[pos]] = np.ascontiguousarray(raw).view(np.uint16)
                if alloc is not None and st.trace is not None:
                    st.trace.read(alloc, off, 16)
        # warp, matrix, row, column (lanes 8j..8j+7 hold the rows of matrix j)
        mats = data.reshape(st.L // 32, 32, 8)[:, :8 * num].reshape(st.L // 32, num, 8, 8)
        for j, put in enumerate(puts):
            mj = mats[:, j]
            if trans:
                mj = np.swapaxes(mj, 1, 2)
            lo = mj[:, _G, 2 * _T].astype(_U32)
            hi = mj[:, _G, 2 * _T + 1].astype(_U32)
            put(st, fr, (lo | (hi << _U32(16))).reshape(st.L), mask)
    return run


@register("stmatrix", form("b16", _LDST_MODS, required=["m8n8", "x1 x2 x4", "sync"]))
def _stmatrix(instr, cx):
    """stmatrix.sync.aligned.m8n8.num{.trans}{.shared}.b16 [p], r (ISA 9.7.14.5.16): the
    inverse of ldmatrix: lane l's register j gives elements (g, 2t), (g, 2t+1) of matrix j
    (of its transpose with ``.trans``), and lanes 8j..8j+7 give the addresses of its rows."""
    num = next(_NUM[m] for m in instr.modifiers if m in _NUM)
    trans = "trans" in instr.modifiers
    acc = Access(instr, cx, instr.operands[0], space_of_instruction(instr), 16, "write")
    gets = [cx.src(e, "b32") for e in _elements(instr.operands[1])]
    if len(gets) != num:
        raise cx.unsupported(f"'{instr.full_opcode}' needs {num} source registers")

    def run(st, fr, mask):
        W = st.L // 32
        mats = np.zeros((W, num, 8, 8), dtype=np.uint16)
        for j, g in enumerate(gets):
            v = np.broadcast_to(np.asarray(g(st, fr)).astype(_U32), (st.L,)).reshape(W, 32)
            mj = np.zeros((W, 8, 8), dtype=np.uint16)
            mj[:, _G, 2 * _T] = (v & _U32(0xFFFF)).astype(np.uint16)
            mj[:, _G, 2 * _T + 1] = (v >> _U32(16)).astype(np.uint16)
            mats[:, j] = np.swapaxes(mj, 1, 2) if trans else mj
        data = np.zeros((W, 32, 8), dtype=np.uint16)
        data[:, :8 * num] = mats.reshape(W, 8 * num, 8)
        data = data.reshape(st.L, 8)
        rows = _rows_of(st, fr, acc, 8 * num, mask, "write")
        if not len(rows):
            return
        pieces = acc.locate(st, fr, rows)
        if st.mem.write_guard is not None:
            guard_writes(st, acc, rows, pieces)
        for buf, off, pos, alloc in pieces:
            raw = np.ascontiguousarray(data[rows[pos]]).view(np.uint8)
            buf[off[:, None] + np.arange(16)[None, :]] = raw
            if alloc is not None and st.trace is not None:
                st.trace.write(alloc, off, 16)
    return run


@register("movmatrix", form("b16", "sync aligned m8n8 trans", required=["m8n8", "trans", "sync"]))
def _movmatrix(instr, cx):
    """movmatrix.sync.aligned.m8n8.trans.b16 d, a (ISA 9.7.14.5.17): the 8x8 matrix the warp
    holds in ldmatrix's fragment layout, transposed."""
    get = cx.src(instr.operands[1], "b32")
    put = cx.dst(instr.operands[0], "b32")

    def run(st, fr, mask):
        W = st.L // 32
        v = np.broadcast_to(np.asarray(get(st, fr)).astype(_U32), (st.L,)).reshape(W, 32)
        m = np.zeros((W, 8, 8), dtype=np.uint16)
        m[:, _G, 2 * _T] = (v & _U32(0xFFFF)).astype(np.uint16)
        m[:, _G, 2 * _T + 1] = (v >> _U32(16)).astype(np.uint16)
        m = np.swapaxes(m, 1, 2)
        out = m[:, _G, 2 * _T].astype(_U32) | (m[:, _G, 2 * _T + 1].astype(_U32) << _U32(16))
        put(st, fr, out.reshape(st.L), mask)
    return run
