"""References of the memory cases: what each load reads and each store writes, byte by byte
(PTX ISA 9.7.9.8 ld, 9.7.9.10 st, 5.1 "State Spaces"): little-endian values, vectors laid
out element 0 first, signed loads sign-extending, narrow stores keeping the low bits."""

from __future__ import annotations

import numpy as np

from tests.conformance.reference.registry import Inputs, reference


def _u(data: bytes, offset: int, size: int) -> int:
    return int.from_bytes(data[offset:offset + size], "little")


def _s(data: bytes, offset: int, size: int) -> int:
    return int.from_bytes(data[offset:offset + size], "little", signed=True)


@reference("memory/widths")
def widths(inputs: Inputs) -> dict:
    src = inputs["src"].tobytes()
    rows = len(src) // 32
    out = bytearray(inputs["out"].tobytes())
    narrow = bytearray(inputs["bytes_out"].tobytes())
    for r in range(rows):
        row = src[32 * r:32 * r + 32]
        o = 128 * r

        def put(offset: int, value: int, size: int, o: int = o) -> None:
            out[o + offset:o + offset + size] = (value % (1 << (8 * size))).to_bytes(
                size, "little")

        put(0, _u(row, 1, 1), 4)
        put(4, _s(row, 1, 1), 4)
        put(8, _u(row, 2, 2), 4)
        put(12, _s(row, 2, 2), 4)
        put(16, _s(row, 3, 1) & 0xFFFF, 4)  # s8 into a 16-bit register, then zero-extended
        put(20, _u(row, 4, 4), 4)
        put(24, _s(row, 4, 4), 8)
        put(32, _u(row, 8, 8), 8)
        put(40, (_u(row, 4, 2) << 16) | _u(row, 6, 2), 4)
        put(44, (row[11] << 8) | row[8], 4)
        put(48, _u(row, 12, 4), 4)
        put(52, _u(row, 8, 4), 4)
        for k in range(4):
            put(64 + 4 * k, _u(row, 16 + 4 * (3 - k), 4), 4)
        put(80, _u(row, 24, 8), 8)
        put(88, _u(row, 16, 8), 8)
        put(96, _u(row, 12, 4), 4)
        put(100, _u(row, 0, 4), 4)
        put(104, _u(row, 8, 8), 8)
        put(112, _u(row, 30, 2), 2)
        put(114, _u(row, 24, 2), 2)
        put(116, _u(row, 28, 4), 4)
        put(120, _u(row, 24, 8), 8)
        word = _u(row, 4, 4)
        n = 16 * r
        narrow[n] = word & 0xFF
        narrow[n + 2:n + 4] = (word & 0xFFFF).to_bytes(2, "little")
        narrow[n + 4] = (word >> 16) & 0xFF
        narrow[n + 5] = word & 0xFF
        narrow[n + 8:n + 12] = bytes([(word >> 24) & 0xFF, (word >> 8) & 0xFF,
                                      (word >> 16) & 0xFF, word & 0xFF])
        narrow[n + 12] = (word >> 16) & 0xFF
        narrow[n + 14:n + 16] = ((word >> 16) & 0xFFFF).to_bytes(2, "little")
    return {"out": np.frombuffer(bytes(out), dtype=np.uint8),
            "bytes_out": np.frombuffer(bytes(narrow), dtype=np.uint8)}


@reference("memory/spaces")
def spaces(inputs: Inputs) -> dict:
    pod = inputs.spec.params[1].raw
    block = inputs.spec.block[0]
    words = []
    for ctaid in range(inputs.spec.grid[0]):
        for tid in range(block):
            nxt = (tid + 1) % block
            words += [
                nxt * 3 + ctaid,                         # tile[(tid + 1) % ntid]
                (block - 1 - tid) ^ 5,                   # dyn[ntid - 1 - tid]
                tid + (tid % 8),                         # scratch[tid % 8]
                _u(pod, 4, 4),
                _u(pod, 12, 4),                          # second element of the v2 at +8
                pod[1],
                [10, 20, 30, 40][tid % 4],               # table[tid % 4]
                9 | (3 << 16),                           # counter[1] | bytes[2] << 16
                tid * 3 + ctaid,                         # tile[tid] through a generic address
                tid + 1,                                 # scratch[1] through a generic address
                7 + 0x600,                               # counter[0] + 0x600
                0,                                       # cvta.to.shared round trip
            ]
    return {"out": np.array(words, dtype="<u4")}
