"""Warp-level matrix load, store and multiply-accumulate: ``wmma.load``, ``wmma.store``,
``wmma.mma`` (PTX ISA 9.7.14.4) for the f16 and bf16 shapes m16n16k16, m8n32k16, m32n8k16.

The ISA fixes how many registers each lane holds for a fragment but leaves the layout of
the elements in them unspecified ("the mapping of matrix elements into fragments is
unspecified", 9.7.14.4.1), so a program can only load, operate element-wise, multiply and
store fragments. The emulator uses its own layout: slot ``s = lane * n + i`` (element ``i``
of the ``n`` a lane holds) carries element ``s mod E`` of the ``E``-element matrix in
row-major order; where the fragment has more slots than the matrix has elements (.f16 A and
B of m16n16k16 hold each element twice, A of m8n32k16 and B of m32n8k16 four times; .bf16
fragments hold each element once) the copies are equal after a load and every element-wise
operation keeps them so. ``wmma.mma`` reads the first copy, computes each dot
product in float64 and rounds once to the accumulator type, like ``mma``.

Memory: element (r, c) of a matrix is at ``p + (r * stride + c) * size`` for ``.row`` and
``p + (c * stride + r) * size`` for ``.col``; ``stride`` defaults to the leading dimension.
``p`` is the address of the warp's first executing lane (the ISA requires one address per
warp).
"""

from __future__ import annotations

import numpy as np

from kernelcheck.emu.dispatch import form, register
from kernelcheck.emu.memops import Access, guard_writes, space_of_instruction
from kernelcheck.emu.values import bf16_to_f32
from kernelcheck.ir.nodes import VectorOperand

__all__: list[str] = []

_SHAPES = {"m16n16k16": (16, 16, 16), "m8n32k16": (8, 32, 16), "m32n8k16": (32, 8, 16)}
_COMMON = "sync aligned row col " + " ".join(_SHAPES)
_SPACE = "global shared shared::cta"


def _dims(which: str, m: int, n: int, k: int) -> tuple[int, int]:
    return {"a": (m, k), "b": (k, n), "c": (m, n), "d": (m, n)}[which]


def _elements(operand):
    return operand.elements if type(operand) is VectorOperand else (operand,)


def _first_lanes(st, mask):
    """The first executing lane of each warp that executes (or -1)."""
    active = (st.alive if mask is None else mask).reshape(-1, 32)
    first = active.argmax(axis=1) + 32 * np.arange(active.shape[0])
    return np.where(active.any(axis=1), first, -1)


def _addresses(base, rows, cols, stride, row_major, size):
    r, c = np.divmod(np.arange(rows * cols), cols)
    offset = (r * stride + c) if row_major else (c * stride + r)
    return base + (offset * size).astype(np.uint64)


class _Fragment:
    """Decoded shape of one wmma operand: element type and slots per lane."""

    def __init__(self, instr, which: str, etype: str) -> None:
        shape = next(m for m in instr.modifiers if m in _SHAPES)
        self.rows, self.cols = _dims(which, *_SHAPES[shape])
        self.etype = etype
        self.size = 4 if etype == "f32" else 2
        self.count = self.rows * self.cols
        # Registers per lane the ISA gives (9.7.14.4.1): .f16 A/B eight .f16x2 (16 halves),
        # C/D eight elements; a .bf16 A/B fragment holds the matrix once: "four .b32
        # registers" for A and B of m16n16k16, two for the 128 elements of A of m8n32k16 (B
        # of m32n8k16), eight for the 512 of B of m8n32k16 (A of m32n8k16).
        if which not in ("a", "b"):
            self.slots = 8
        elif etype == "bf16":
            self.slots = self.count // 32
        else:
            self.slots = 16
        self.regs = self.slots if etype == "f32" else self.slots // 2
        self.row_major = "row" in instr.modifiers


@register("wmma",
          form("f16 bf16", _COMMON + " load a b " + _SPACE,
               required=["load", "a b", "row col", " ".join(_SHAPES), "sync"]),
          form("f16 f32", _COMMON + " load c " + _SPACE,
               required=["load", "c", "row col", " ".join(_SHAPES), "sync"]),
          form("f16 f32", _COMMON + " store d " + _SPACE,
               required=["store", "d", "row col", " ".join(_SHAPES), "sync"]),
          form("f16.f16 f32.f16 f16.f32 f32.f32", _COMMON + " mma",
               required=["mma", " ".join(_SHAPES), "sync"]),
          form("f32.bf16.bf16.f32", _COMMON + " mma",
               required=["mma", " ".join(_SHAPES), "sync"]))
def _wmma(instr, cx):
    mods = instr.modifiers
    if "mma" in mods:
        return _mma(instr, cx)
    which = next(m for m in mods if m in ("a", "b", "c", "d"))
    etype = next(m for m in mods if m in ("f16", "bf16", "f32"))
    frag = _Fragment(instr, which, etype)
    load = "load" in mods
    regs = _elements(instr.operands[0 if load else 1])
    if len(regs) != frag.regs:
        raise cx.unsupported(f"'{instr.full_opcode}' holds {frag.regs} registers per lane")
    address = instr.operands[1 if load else 0]
    acc = Access(instr, cx, address, space_of_instruction(instr), frag.size,
                 "read" if load else "write")
    stride = cx.src(instr.operands[2], "u32") if len(instr.operands) > 2 else None
    lead = frag.cols if frag.row_major else frag.rows
    wide = "b32"
    getters = [cx.src(r, wide) for r in regs] if not load else None
    puts = [cx.dst(r, wide) for r in regs] if load else None
    udt = np.uint32 if frag.size == 4 else np.uint16

    def run(st, fr, mask):
        firsts = _first_lanes(st, mask)
        strides = np.broadcast_to(np.asarray(stride(st, fr) if stride else lead).astype(
            np.int64), (st.L,))
        slots = np.zeros((st.L // 32, 32 * frag.slots), dtype=udt)
        for w, lane in enumerate(firsts.tolist()):
            if lane < 0:
                continue
            start = acc.addresses(st, fr, np.array([lane]))[0]
            addrs = _addresses(start, frag.rows, frag.cols, int(strides[lane]), frag.row_major,
                               frag.size)
            owners = np.full(frag.count, lane)
            pieces = acc.locate_addresses(st, addrs, owners)
            if load:
                values = np.zeros(frag.count, dtype=udt)
                for buf, off, pos, alloc in pieces:
                    values[pos] = buf.view(udt)[off // frag.size]
                    if alloc is not None and st.trace is not None:
                        st.trace.read(alloc, off, frag.size)
                slots[w] = values[np.arange(32 * frag.slots) % frag.count]
            else:
                words = np.stack([np.broadcast_to(np.asarray(g(st, fr)).astype(np.uint32),
                                                  (st.L,))[32 * w:32 * w + 32]
                                  for g in getters], axis=1)
                values = words.view(udt).reshape(-1)[:frag.count]
                if st.mem.write_guard is not None:
                    guard_writes(st, acc, owners, pieces)
                for buf, off, pos, alloc in pieces:
                    buf.view(udt)[off // frag.size] = values[pos]
                    if alloc is not None and st.trace is not None:
                        st.trace.write(alloc, off, frag.size)
        if load:
            words = slots.reshape(st.L, frag.slots).view(np.uint32) if frag.size == 2 else \
                slots.reshape(st.L, frag.slots)
            for j, put in enumerate(puts):
                put(st, fr, np.ascontiguousarray(words[:, j]), mask)
    return run


def _values(words, etype):
    """Element values (float64) of fragment words (warps, 32, regs)."""
    if etype == "f32":
        return words.view(np.float32).astype(np.float64).reshape(words.shape[0], -1)
    halves = words.reshape(words.shape[0], -1).view(np.uint16)
    if etype == "bf16":
        return bf16_to_f32(halves).astype(np.float64)
    return halves.view(np.float16).astype(np.float64)


def _mma(instr, cx):
    types = [m for m in instr.modifiers if m in ("f16", "f32", "bf16")]
    if len(types) == 4:
        dtype, atype, _, ctype = types
    else:
        (dtype, ctype), atype = types, "f16"
    shape = next(m for m in instr.modifiers if m in _SHAPES)
    m, n, k = _SHAPES[shape]
    d_op, a_op, b_op, c_op = instr.operands[:4]
    ga = [cx.src(e, "b32") for e in _elements(a_op)]
    gb = [cx.src(e, "b32") for e in _elements(b_op)]
    gc = [cx.src(e, "b32") for e in _elements(c_op)]
    puts = [cx.dst(e, "b32") for e in _elements(d_op)]
    regs = {"f16": 4, "f32": 8}
    # A and B registers per lane (9.7.14.4.1): eight .f16x2; .bf16 as many as hold the matrix
    # once, two elements per register.
    ra, rb = (8, 8) if atype == "f16" else (m * k // 64, k * n // 64)
    if len(ga) != ra or len(gb) != rb or len(gc) != regs[ctype] or len(puts) != regs[dtype]:
        raise cx.unsupported(f"operand counts of '{instr.full_opcode}'")
    # The layouts (.row/.col) of A and B only matter to the loads: the emulator's fragments
    # hold the matrices in row-major order whatever the layout they were loaded from.

    def words(st, fr, getters):
        cols = [np.broadcast_to(np.asarray(g(st, fr)).astype(np.uint32), (st.L,))
                for g in getters]
        return np.stack(cols, axis=-1).reshape(st.L // 32, 32 * len(getters))

    def run(st, fr, mask):
        A = _values(words(st, fr, ga), atype)[:, :m * k].reshape(-1, m, k)
        B = _values(words(st, fr, gb), atype)[:, :k * n].reshape(-1, k, n)
        C = _values(words(st, fr, gc), ctype)[:, :m * n].reshape(-1, m, n)
        with np.errstate(all="ignore"):
            D = np.einsum("wmk,wkn->wmn", A, B) + C
        flat = D.reshape(D.shape[0], -1)
        if dtype == "f16":
            out = flat.astype(np.float16).view(np.uint16).view(np.uint32)
        else:
            out = flat.astype(np.float32).view(np.uint32)
        out = out.reshape(st.L, -1)
        for j, put in enumerate(puts):
            put(st, fr, np.ascontiguousarray(out[:, j]), mask)
    return run
