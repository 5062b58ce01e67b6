"""References of the atomic cases (PTX ISA 9.7.12.5 atom, 9.7.12.6 red): the operations'
definitions, applied in any order (the cases use only order-independent results).

atom.inc: old >= b ? 0 : old + 1; atom.dec: (old == 0 || old > b) ? b : old - 1 (unsigned
32-bit); cas: old == b ? c : old stored; exch stores b; all return the old value.
"""

from __future__ import annotations

import struct

import numpy as np

from tests.conformance.reference.bits import signed, unsigned
from tests.conformance.reference.registry import Inputs, reference


def inc(old: int, bound: int) -> int:
    return 0 if old >= bound else old + 1


def dec(old: int, bound: int) -> int:
    return bound if (old == 0 or old > bound) else old - 1


@reference("atomics/contended")
def contended(inputs: Inputs) -> dict:
    c = bytearray(inputs["c"].tobytes())
    threads = inputs.threads

    def get(offset: int, fmt: str):
        return struct.unpack_from(fmt, c, offset)[0]

    def put(offset: int, fmt: str, value) -> None:
        struct.pack_into(fmt, c, offset, value)

    t = range(threads)
    put(0, "<I", get(0, "<I") + threads)
    put(8, "<Q", unsigned(get(8, "<Q") + sum((1 << 32) + k for k in t), 64))
    put(16, "<f", get(16, "<f") + 0.5 * threads)  # exact: every partial sum is representable
    put(20, "<i", min([get(20, "<i")] + [7 * k - 200 for k in t]))
    put(24, "<I", max([get(24, "<I")] + [3 * k for k in t]))
    and_mask = get(28, "<I")
    or_mask = get(32, "<I")
    xor_mask = get(36, "<I")
    for k in t:
        and_mask &= ~(1 << (k & 31)) & 0xFFFFFFFF
        or_mask |= unsigned(1 << ((k & 31) + 1), 32)
        xor_mask ^= unsigned(k * 0x9E3779B9, 32)
    put(28, "<I", and_mask)
    put(32, "<I", or_mask)
    put(36, "<I", xor_mask)
    value_inc, value_dec = get(40, "<I"), get(44, "<I")
    for _ in t:
        value_inc = inc(value_inc, 9)
        value_dec = dec(value_dec, 9)
    put(40, "<I", value_inc)
    put(44, "<I", value_dec)
    put(48, "<I", get(48, "<I") + sum(t))
    put(52, "<I", get(52, "<I") + sum(t))
    put(56, "<d", get(56, "<d") + 0.25 * threads)
    put(64, "<i", max([get(64, "<i")] + [7 * k - 200 for k in t]))
    or64 = get(72, "<Q")
    for k in t:
        or64 |= (1 << 32) + k
    put(72, "<Q", or64)
    put(80, "<I", get(80, "<I") + 2 * threads)
    put(88, "<Q", min([get(88, "<Q")] + [(1 << 32) + k for k in t]))
    return {"c": np.frombuffer(bytes(c), dtype=np.uint8),
            "hist": np.ones(threads, dtype="<u4")}


#: (operation, type, initial value, operand[, new value for cas]) of each slot of
#: cases/atomics/types.ptx, first on global memory, then on shared memory
TYPE_SLOTS = [
    ("add", "u32", 0xFFFFFFF0, 0x20), ("add", "s32", -5, 3), ("add", "u64", 2 ** 63 - 1, 7),
    ("add", "f32", 1.5, 2.25), ("add", "f64", 1.25, 0.5),
    ("min", "u32", 0x80000000, 0x7FFFFFFF), ("max", "u32", 0x80000000, 0x7FFFFFFF),
    ("min", "s32", -5, 3), ("max", "s32", -5, 3), ("min", "u64", 2 ** 63, 2 ** 63 - 1),
    ("max", "u64", 2 ** 63, 2 ** 63 - 1), ("min", "s64", -9, -2), ("max", "s64", -9, -2),
    ("and", "b32", 0xF0F0F0F0, 0x0FF00FF0), ("or", "b32", 0xF0F0F0F0, 0x0FF00FF0),
    ("xor", "b32", 0xF0F0F0F0, 0x0FF00FF0), ("exch", "b32", 0xF0F0F0F0, 0x0FF00FF0),
    ("and", "b64", 0xFFFF0000FFFF0000, 0x00FF00FF00FF00FF),
    ("or", "b64", 0xFFFF0000FFFF0000, 0x00FF00FF00FF00FF),
    ("xor", "b64", 0xFFFF0000FFFF0000, 0x00FF00FF00FF00FF),
    ("exch", "b64", 0xFFFF0000FFFF0000, 0x00FF00FF00FF00FF),
    ("cas", "b32", 0x1234, 0x1234, 0xBEEF), ("cas", "b64", 0x1234, 0x9999, 0xBEEF),
    ("cas", "b16", 0x1234, 0x1234, 0xBEEF), ("inc", "u32", 5, 5), ("inc", "u32", 3, 5),
    ("dec", "u32", 0, 9), ("dec", "u32", 4, 9),
]
_FORMATS = {"u32": "<I", "s32": "<i", "u64": "<Q", "s64": "<q", "f32": "<f", "f64": "<d",
            "b32": "<I", "b64": "<Q", "b16": "<H"}


def _apply(op: str, type_name: str, old, operand, new=None):
    bits = struct.calcsize(_FORMATS[type_name]) * 8
    if op == "add":
        return old + operand if type_name in ("f32", "f64") else unsigned(old + operand, bits)
    if op == "min":
        return min(old, operand)
    if op == "max":
        return max(old, operand)
    if op == "and":
        return old & operand
    if op == "or":
        return old | operand
    if op == "xor":
        return old ^ operand
    if op == "exch":
        return operand
    if op == "cas":
        return new if old == operand else old
    if op == "inc":
        return inc(old, operand)
    return dec(old, operand)


@reference("atomics/types")
def types(inputs: Inputs) -> dict:
    m = bytearray(inputs["m"].tobytes())
    ret = bytearray(len(m))
    slots = len(TYPE_SLOTS)
    for space in range(2):
        for k, (op, type_name, _init, operand, *rest) in enumerate(TYPE_SLOTS):
            offset = 16 * (space * slots + k)
            fmt = _FORMATS[type_name]
            old = struct.unpack_from(fmt, m, offset)[0]
            struct.pack_into(fmt, ret, offset, old)
            new = _apply(op, type_name, old, operand, *rest)
            if fmt in ("<i", "<q"):
                new = signed(new, struct.calcsize(fmt) * 8)
            struct.pack_into(fmt, m, offset, new)
    return {"m": np.frombuffer(bytes(m), dtype=np.uint8),
            "ret": np.frombuffer(bytes(ret), dtype=np.uint8)}
