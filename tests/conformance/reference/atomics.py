"""References of the atomic cases (PTX ISA 9.7.12.5 atom, 9.7.12.6 red): the operations'
definitions, applied in any order (the cases use only order-independent results).

atom.inc: old >= b ? 0 : old + 1; atom.dec: (old == 0 || old > b) ? b : old - 1 (unsigned
32-bit); cas: old == b ? c : old stored; exch stores b; all return the old value.
"""

from __future__ import annotations

import struct

import numpy as np

from tests.conformance.reference.bits import unsigned
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
