"""Data movement and conversion: ``mov`` (with vector pack/unpack), ``cvt``, ``cvta``.

``cvt`` follows PTX ISA 9.7.9.21: float to integer rounds with ``.rni``/``.rzi``/``.rmi``/
``.rpi`` (default ``.rzi`` in nvcc output) and saturates to the destination range, with NaN
converting to 0; integer to integer conversions truncate or extend by the source signedness
and clamp only with ``.sat``; float to float conversions round with ``.rn``/``.rz``/``.rm``/
``.rp`` or, with an integer rounding modifier, round to an integral value in the same type.

Generic addressing (``cvta``): shared memory is seen through the window starting at
:data:`SHARED_WINDOW` and local memory through :data:`LOCAL_WINDOW`; any other generic address
is a global address. ``cvta.to.shared`` of an address outside the window gives an address the
shared access then rejects.
"""

from __future__ import annotations

import numpy as np

from kernelcheck.emu.compiler import OPS
from kernelcheck.emu.floats import flush, round_to, saturate
from kernelcheck.emu.values import NP_TYPE, UINT_OF_SIZE, bf16_to_f32, f32_to_bf16, is_float

__all__ = ["SHARED_WINDOW", "LOCAL_WINDOW", "WINDOW_SIZE"]

#: Base of the generic-address window onto the block's shared memory.
SHARED_WINDOW = 0x7D00_0000_0000
#: Base of the generic-address window onto the thread's local memory.
LOCAL_WINDOW = 0x7E00_0000_0000
#: Size of each window.
WINDOW_SIZE = 1 << 32


def _register(*names):
    def deco(factory):
        for name in names:
            OPS[name] = factory
        return factory
    return deco


@_register("mov")
def _mov(instr, cx):
    t = next((m for m in instr.modifiers if m in NP_TYPE), None)
    if t is None:
        raise cx.unsupported()
    dest, source = instr.operands[0], instr.operands[1]
    size = NP_TYPE[t].itemsize
    if type(dest).__name__ == "VectorOperand" and type(source).__name__ == "VectorOperand":
        # mov.v2/.v4: element by element (ISA 6.4.3, vectors as operands).
        if len(dest.elements) != len(source.elements):
            raise cx.unsupported("vector mov with operands of different lengths")
        pairs = [(cx.src(s, t), cx.dst(d, t)) for d, s in zip(dest.elements,
                                                                source.elements, strict=True)]

        def move(st, fr, mask):
            values = [get(st, fr) for get, _ in pairs]  # every source before any write
            for (_, put), value in zip(pairs, values, strict=True):
                put(st, fr, value, mask)
        return move
    if type(dest).__name__ == "VectorOperand":
        # Unpack: mov.b64 {%r1, %r2}, %rd1 (element 0 is the low bits).
        n = len(dest.elements)
        part = size // n
        if part not in (1, 2, 4) or part * n != size:
            raise cx.unsupported(f"mov.{t} unpacking into {n} elements")
        pt = {1: "b8", 2: "b16", 4: "b32"}[part]
        get = cx.src(source, t)
        puts = [cx.dst(e, pt) for e in dest.elements]
        ut = UINT_OF_SIZE[size]
        mask_bits = (1 << (8 * part)) - 1

        def unpack(st, fr, mask):
            v = np.asarray(get(st, fr)).view(ut) if np.ndim(get(st, fr)) else \
                np.asarray(get(st, fr)).astype(ut)
            for k, put in enumerate(puts):
                put(st, fr, ((v >> ut.type(8 * part * k)) & ut.type(mask_bits))
                    .astype(NP_TYPE[pt]), mask)
        return unpack
    if type(source).__name__ == "VectorOperand":
        n = len(source.elements)
        part = size // n
        if part not in (1, 2, 4) or part * n != size:
            raise cx.unsupported(f"mov.{t} packing {n} elements")
        pt = {1: "b8", 2: "b16", 4: "b32"}[part]
        gets = [cx.src(e, pt) for e in source.elements]
        put = cx.dst(dest, t)
        ut = UINT_OF_SIZE[size]

        def pack(st, fr, mask):
            v = ut.type(0)
            for k, get in enumerate(gets):
                v = v | (np.asarray(get(st, fr)).astype(ut) << ut.type(8 * part * k))
            put(st, fr, np.asarray(v).view(NP_TYPE[t]) if np.ndim(v) else
                np.asarray(v).astype(ut).view(NP_TYPE[t]), mask)
        return pack
    get = cx.src(source, t)
    put = cx.dst(dest, t)

    def mov(st, fr, mask):
        put(st, fr, get(st, fr), mask)
    return mov


_INT_ROUND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def _float_in(t):
    if t == "bf16":
        return lambda v: bf16_to_f32(v)
    return lambda v: v


@_register("cvt")
def _cvt(instr, cx):
    types = [m for m in instr.modifiers if m in NP_TYPE]
    if len(types) != 2:
        raise cx.unsupported()
    dt_name, st_name = types
    mods = instr.modifiers
    sat = "sat" in mods
    ftz = "ftz" in mods
    irnd = next((m for m in mods if m in _INT_ROUND), None)
    frnd = next((m for m in mods if m in ("rn", "rz", "rm", "rp")), None)
    get = cx.src(instr.operands[1], st_name)
    put = cx.dst(instr.operands[0], dt_name)
    src_float, dst_float = is_float(st_name), is_float(dt_name)
    ddt = NP_TYPE[dt_name]
    if src_float and not dst_float:
        round_fn = _INT_ROUND[irnd or "rzi"]
        info = np.iinfo(ddt)

        def f2i(st, fr, mask):
            x = np.asarray(_float_in(st_name)(get(st, fr)), dtype=np.float64)
            if ftz:
                x = flush(x)
            r = round_fn(x)
            r = np.where(np.isnan(r), 0, np.clip(r, info.min, info.max))
            if ddt.itemsize == 8:
                big = r >= 2.0**63
                out = np.where(big, 0, r).astype(np.int64)
                if ddt.kind == "u":
                    out = out.view(np.uint64) + np.where(big, np.uint64(info.max), np.uint64(0))
                    out = np.where(big & (r < info.max), np.asarray(r).astype(np.uint64), out)
                put(st, fr, out.astype(ddt), mask)
            else:
                put(st, fr, r.astype(ddt), mask)
        return f2i
    if not src_float and dst_float:
        mode = frnd or "rn"

        def i2f(st, fr, mask):
            x = np.asarray(get(st, fr))
            if dt_name in ("f32", "f16", "bf16") or x.dtype.itemsize < 8:
                if ddt == np.float64:
                    r = x.astype(np.float64)
                elif dt_name == "bf16":
                    r = f32_to_bf16(round_to(x.astype(np.float64), np.float32, mode))
                else:
                    r = round_to(x.astype(np.float64), ddt, mode) if x.dtype.itemsize < 8 \
                        else x.astype(ddt)
            else:
                r = x.astype(ddt)
            if sat:
                r = saturate(r)
            put(st, fr, r, mask)
        return i2f
    if src_float and dst_float:
        def f2f(st, fr, mask):
            x = _float_in(st_name)(get(st, fr))
            if ftz:
                x = flush(x)
            if irnd:
                r = _INT_ROUND[irnd](x)
            else:
                r = x
            if dt_name == "bf16":
                r = f32_to_bf16(np.asarray(r, np.float32))
            elif frnd and frnd != "rn" and NP_TYPE[dt_name].itemsize < np.asarray(r).itemsize:
                r = round_to(np.asarray(r, np.float64), ddt, frnd)
            else:
                r = np.asarray(r).astype(ddt)
            if ftz:
                r = flush(r)
            if sat:
                r = saturate(r)
            put(st, fr, r, mask)
        return f2f
    # integer to integer
    sdt = NP_TYPE[st_name]
    if sat:
        info = np.iinfo(ddt)

        def i2i_sat(st, fr, mask):
            x = np.asarray(get(st, fr)).astype(object if sdt.itemsize == 8 else np.int64)
            r = np.clip(x, info.min, info.max)
            put(st, fr, np.asarray(r).astype(ddt), mask)
        return i2i_sat

    def i2i(st, fr, mask):
        put(st, fr, np.asarray(get(st, fr)).astype(ddt), mask)
    return i2i


@_register("cvta")
def _cvta(instr, cx):
    mods = instr.modifiers
    t = next(m for m in mods if m in NP_TYPE)
    to = "to" in mods
    space = next(m for m in mods if m in ("global", "shared", "local", "const", "param"))
    get = cx.src(instr.operands[1], t)
    put = cx.dst(instr.operands[0], t)
    base = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}.get(space, 0)
    dt = NP_TYPE[t]
    if base == 0:
        return lambda st, fr, mask: put(st, fr, get(st, fr), mask)
    b = dt.type(base & ((1 << (8 * dt.itemsize)) - 1))

    def run(st, fr, mask):
        x = np.asarray(get(st, fr), dtype=dt)
        put(st, fr, x - b if to else x + b, mask)
    return run


_ = bf16_to_f32
