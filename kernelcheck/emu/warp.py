"""Warp-level instructions (PTX ISA 9.7.8.6 shfl.sync, 9.7.12.10 vote.sync and the deprecated
vote, 9.7.12.11 match.sync, 9.7.12.12 activemask, 9.7.12.13 redux.sync).

Lanes of a batch come in aligned groups of 32 (see :mod:`kernelcheck.emu.executor`), so a warp
is a row of the ``(lanes // 32, 32)`` reshape. Only the lanes that execute the instruction
together take part; a ``shfl.sync`` reading an inactive or out-of-range lane returns the
reading lane's own value, with the predicate output false. The ``membermask`` operand is not
checked against the executing lanes (the hardware leaves a mismatch undefined).
"""

from __future__ import annotations

import numpy as np

from kernelcheck.emu.compiler import instruction_type
from kernelcheck.emu.dispatch import form, register
from kernelcheck.emu.values import NP_TYPE
from kernelcheck.ir.nodes import PredicatePair

__all__: list[str] = []

_U32 = np.uint32
_BITS = (np.uint32(1) << np.arange(32, dtype=np.uint32))


def _full(v, L, dtype):
    v = np.asarray(v, dtype=dtype)
    return np.broadcast_to(v, (L,)) if v.ndim == 0 else v


def _exec(st, mask):
    return st.alive if mask is None else mask


def _ballot(active: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Per-warp ballot bits, repeated for every lane of the warp."""
    bits = ((pred & active).reshape(-1, 32) * _BITS).sum(axis=1, dtype=np.uint64)
    return np.repeat(bits.astype(_U32), 32)


@register("shfl", form("b32", "sync up down bfly idx", required=["sync", "up down bfly idx"]))
def _shfl(instr, cx):
    mode = next(m for m in instr.modifiers if m in ("up", "down", "bfly", "idx"))
    dest = instr.operands[0]
    put = cx.dst(dest, "b32")
    pput = cx.dst(dest.second, "pred") if type(dest) is PredicatePair else None
    a = cx.src(instr.operands[1], "b32")
    b = cx.src(instr.operands[2], "u32")
    c = cx.src(instr.operands[3], "u32")

    def run(st, fr, mask):
        L = st.L
        active = _exec(st, mask)
        lane = st.special("%laneid").astype(np.int64)
        bval = _full(b(st, fr), L, _U32).astype(np.int64) & 31
        cval = _full(c(st, fr), L, _U32).astype(np.int64)
        clamp = cval & 31
        segmask = (cval >> 8) & 31
        max_lane = (lane & segmask) | (clamp & ~segmask)
        min_lane = lane & segmask
        if mode == "up":
            j = lane - bval
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bval
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bval
            ok = j <= max_lane
        else:
            j = min_lane | (bval & ~segmask)
            ok = j <= max_lane
        src = st.all_lanes - lane + np.clip(j, 0, 31)
        ok = ok & active[src]
        src = np.where(ok, src, st.all_lanes)
        values = _full(a(st, fr), L, _U32)
        put(st, fr, values[src], mask)
        if pput is not None:
            pput(st, fr, ok, mask)
    return run


@register("vote", form("pred", "sync any all uni", required=["any all uni"]),
          form("b32", "sync ballot", required=["ballot"]))
def _vote(instr, cx):
    """vote.sync and the deprecated vote without ``.sync`` (ISA 9.7.12, "vote"), which votes
    over the active threads of the warp and has no membermask operand. Both take the lanes
    executing the instruction together; an inactive lane contributes a 0 bit to ``.ballot``."""
    mode = next(m for m in instr.modifiers if m in ("any", "all", "uni", "ballot"))
    p = cx.src(instr.operands[1], "pred")
    put = cx.dst(instr.operands[0], "b32" if mode == "ballot" else "pred")

    def run(st, fr, mask):
        active = _exec(st, mask)
        pred = _full(p(st, fr), st.L, np.bool_)
        if mode == "ballot":
            put(st, fr, _ballot(active, pred), mask)
            return
        hits = _ballot(active, pred)
        members = _ballot(active, np.ones(st.L, dtype=bool))
        if mode == "any":
            r = hits != 0
        elif mode == "all":
            r = hits == members
        else:
            r = (hits == 0) | (hits == members)
        put(st, fr, r, mask)
    return run


@register("activemask", form("b32"))
def _activemask(instr, cx):
    put = cx.dst(instr.operands[0], "b32")

    def run(st, fr, mask):
        active = _exec(st, mask)
        put(st, fr, _ballot(active, np.ones(st.L, dtype=bool)), mask)
    return run


@register("match", form("b32 b64", "sync any all", required=["sync", "any all"]))
def _match(instr, cx):
    t = instruction_type(instr)
    all_mode = "all" in instr.modifiers
    dest = instr.operands[0]
    put = cx.dst(dest, "b32")
    pput = cx.dst(dest.second, "pred") if type(dest) is PredicatePair else None
    a = cx.src(instr.operands[1], t)

    def run(st, fr, mask):
        active = _exec(st, mask).reshape(-1, 32)
        v = _full(a(st, fr), st.L, NP_TYPE[t]).reshape(-1, 32)
        same = (v[:, :, None] == v[:, None, :]) & active[:, None, :]
        bits = (same * _BITS).sum(axis=2, dtype=np.uint64).astype(_U32)
        members = (active * _BITS).sum(axis=1, dtype=np.uint64).astype(_U32)
        if all_mode:
            equal = bits == members[:, None]
            allsame = np.all(equal | ~active, axis=1)
            # d is membermask (here: the executing lanes) in every lane of the warp, or 0.
            out = np.repeat(np.where(allsame, members, _U32(0)), 32)
            put(st, fr, out, mask)
            if pput is not None:
                pput(st, fr, np.repeat(allsame, 32), mask)
        else:
            put(st, fr, bits.reshape(-1), mask)
    return run


@register("redux", form("u32 s32", "sync add min max", required=["sync", "add min max"]),
          form("b32", "sync and or xor", required=["sync", "and or xor"]),
          form("f32", "sync min max abs NaN", required=["sync", "min max"]))
def _redux(instr, cx):
    """redux.sync (ISA 9.7.12.13 / 9.7.13.13): the reduction over the warp's executing lanes,
    given to each of them. ``.add`` wraps; ``.f32`` ``min``/``max`` take ``.abs`` (of each
    input) and ``.NaN`` (NaN if any input is NaN, else NaN inputs are ignored; the result is
    the canonical NaN only when every input is NaN or .NaN sees one)."""
    op = next(m for m in instr.modifiers if m in ("add", "min", "max", "and", "or", "xor"))
    t = instruction_type(instr)
    a = cx.src(instr.operands[1], t)
    put = cx.dst(instr.operands[0], t)
    dt = NP_TYPE[t]
    if t == "f32":
        return _redux_f32(instr, cx, op, a, put)
    identity = {"add": 0, "or": 0, "xor": 0, "and": -1,
                "min": np.iinfo(dt).max, "max": np.iinfo(dt).min}[op]
    ufunc = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
             "or": np.bitwise_or, "xor": np.bitwise_xor}[op]

    def run(st, fr, mask):
        active = _exec(st, mask)
        v = _full(a(st, fr), st.L, dt)
        ident = np.array(identity).astype(dt) if op != "and" else np.array(-1).astype(
            np.int64).astype(dt)
        masked = np.where(active, v, ident).reshape(-1, 32)
        r = ufunc.reduce(masked, axis=1).astype(dt)
        put(st, fr, np.repeat(r, 32), mask)
    return run


def _redux_f32(instr, cx, op, a, put):
    take_abs = "abs" in instr.modifiers
    nan_mode = "NaN" in instr.modifiers
    canonical = np.uint32(0x7FFFFFFF).view(np.float32)

    def run(st, fr, mask):
        active = _exec(st, mask).reshape(-1, 32)
        v = _full(a(st, fr), st.L, np.float32).reshape(-1, 32)
        if take_abs:
            v = np.abs(v)
        nan = np.isnan(v) & active
        # Inactive lanes and ignored NaNs take the identity (+inf for min, -inf for max);
        # -0.0 is below +0.0 for both (ISA min/max).
        ident = np.float32(np.inf if op == "min" else -np.inf)
        vals = np.where(active & ~nan, v, ident)
        if op == "min":
            r = vals.min(axis=1)
            zero = (vals == 0).any(axis=1) & (r == 0)
            r = np.where(zero & np.signbit(vals).any(axis=1) & (vals == 0).any(axis=1),
                         np.float32(-0.0), r)
        else:
            r = vals.max(axis=1)
            zero = (r == 0)
            r = np.where(zero & (~np.signbit(vals) & (vals == 0)).any(axis=1), np.float32(0.0),
                         r)
        every_nan = (nan | ~active).all(axis=1) & nan.any(axis=1)
        bad = (nan.any(axis=1) if nan_mode else every_nan)
        r = np.where(bad, canonical, r).astype(np.float32)
        put(st, fr, np.repeat(r, 32), mask)
    return run


@register("bar", form("u32", "red popc sync aligned cta", required=["red", "popc"]),
          form("pred", "red and or sync aligned cta", required=["red", "and or"]))
@register("barrier", form("u32", "red popc sync aligned cta", required=["red", "popc"]),
          form("pred", "red and or sync aligned cta", required=["red", "and or"]))
def _bar_red(instr, cx):
    """bar.red.popc.u32 d, a, {!}c and bar.red.{and,or}.pred p, a, {!}c (ISA 9.7.13.1): a
    barrier that also reduces ``c`` over every thread of the CTA: the number of threads where
    it holds, or whether it holds in all (``and``) or any (``or``) of them. The minimum-PC
    schedule runs it once every lane of the block that reaches it is there (see
    :mod:`kernelcheck.emu.executor`). The form with a thread count ``b`` (a barrier of part of
    the CTA) is not run."""
    if len(instr.operands) != 3:
        raise cx.unsupported(f"'{instr.full_opcode}' with a thread count (a barrier of part "
                             f"of the CTA)")
    op = next(m for m in instr.modifiers if m in ("popc", "and", "or"))
    c = cx.src(instr.operands[2], "pred")
    put = cx.dst(instr.operands[0], "u32" if op == "popc" else "pred")

    def run(st, fr, mask):
        active = _exec(st, mask)
        pred = _full(c(st, fr), st.L, np.bool_)
        slots = st.block_slot
        nb = int(slots.max()) + 1 if len(slots) else 0
        hits = np.bincount(slots, weights=(pred & active), minlength=nb).astype(np.int64)
        members = np.bincount(slots, weights=active, minlength=nb).astype(np.int64)
        if op == "popc":
            put(st, fr, hits[slots].astype(_U32), mask)
        elif op == "and":
            put(st, fr, (hits == members)[slots], mask)
        else:
            put(st, fr, (hits > 0)[slots], mask)
    return run


@register("elect", form("", "sync", required=["sync"]))
def _elect(instr, cx):
    """elect.sync d|p, membermask (ISA 9.7.13.14): one leader among the executing lanes of
    the warp named in ``membermask``, the lowest; ``d`` is its lane id in every lane and
    ``p`` is true in the leader only."""
    dest = instr.operands[0]
    if type(dest) is PredicatePair:
        put = cx.dst(dest.first, "b32")
        pput = cx.dst(dest.second, "pred")
    else:
        put, pput = cx.dst(dest, "b32"), None
    members = cx.src(instr.operands[1], "b32")

    def run(st, fr, mask):
        active = _exec(st, mask)
        lane = st.special("%laneid").astype(np.int64)
        named = (_full(members(st, fr), st.L, _U32) >> lane.astype(_U32)) & _U32(1)
        candidates = (active & (named == 1)).reshape(-1, 32)
        first = np.where(candidates.any(axis=1), candidates.argmax(axis=1), 0)
        leader = np.repeat(first, 32)
        put(st, fr, leader.astype(_U32), mask)
        if pput is not None:
            pput(st, fr, (lane == leader) & candidates.reshape(-1), mask)
    return run
